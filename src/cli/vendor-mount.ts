/**
 * @module
 * Opens the vendor endpoints (`/v1/messages`) for `codecall serve --http`: the request's model
 * name maps to `demo` or to a spec of the `serve.models` table, each model created once, lazily.
 * Paused scripts live in `serve.vendorJournalDir` when it is set, else in the jobs backend's
 * Redis (`bullmq`) or PostgreSQL (`postgres`), else in memory.
 */
import type { CodecallConfig, JobsConfig } from '../config/index.js';
import type { CodecallRuntime } from '../execute/index.js';
import type { LanguageModel } from '../providers/language-model.js';
import type { PausedRunStore } from '../store/index.js';
import type { VendorRoutes } from '../vendor-api/index.js';

/** The vendor routes for a serve process (loaded only with `--http`). */
export async function openVendorRoutes(
  runtime: CodecallRuntime,
  config: CodecallConfig,
  env: Readonly<Record<string, string | undefined>>,
  jobs: Pick<JobsConfig, 'backend' | 'connection'> = config.jobs,
): Promise<VendorRoutes & { pausedWhere: string }> {
  const [{ createVendorRoutes }, { DemoLanguageModel, DEMO_MODEL_NAME }, { createLanguageModel }] =
    await Promise.all([
      import('../vendor-api/index.js'),
      import('../agent/index.js'),
      import('../providers/create-language-model.js'),
    ]);
  const table: Record<string, string> = { ...config.serve.models };
  const made = new Map<string, LanguageModel>();
  let paused: PausedRunStore | undefined;
  let pausedWhere = 'in memory';
  if (config.serve.vendorJournalDir !== undefined) pausedWhere = `in ${config.serve.vendorJournalDir}`;
  else if (jobs.connection !== undefined && jobs.backend === 'bullmq') {
    const { RedisPausedRunStore } = await import('../store/paused-run-store-redis.js');
    paused = await RedisPausedRunStore.open({ redis: jobs.connection });
    pausedWhere = 'in Redis (jobs.connection)';
  } else if (jobs.connection !== undefined && jobs.backend === 'postgres') {
    const { PostgresPausedRunStore } = await import('../store/paused-run-store-postgres.js');
    paused = await PostgresPausedRunStore.open({ connection: jobs.connection });
    pausedWhere = 'in PostgreSQL (jobs.connection)';
  }
  const routes = createVendorRoutes({
    runtime,
    model(name) {
      let model = made.get(name);
      if (model !== undefined) return model;
      if (name === DEMO_MODEL_NAME && table[name] === undefined) model = new DemoLanguageModel();
      else if (Object.hasOwn(table, name)) model = createLanguageModel(table[name]!, { env });
      else return undefined;
      made.set(name, model);
      return model;
    },
    modelNames: () => [...new Set([DEMO_MODEL_NAME, ...Object.keys(table)])],
    secret: config.serve.vendorSecret,
    journalDir: config.serve.vendorJournalDir,
    containerTtlMs: config.serve.vendorContainerTtlMs,
    paused,
  });
  return Object.assign(routes, { pausedWhere });
}
