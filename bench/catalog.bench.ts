/**
 * @module
 * Per-run cost against catalog size: the same short script (one tool call, one line printed) run
 * through the real library path (`CodecallRuntime.execute`: compile, executor bindings, sandbox,
 * tool pool, real MCP SDK clients and servers over in-memory transports) against a catalog of
 * 10 tools (one server) and one of 10,000 (two servers of 5,000), interleaved run by run in the same process. The 10-tool catalog
 * is the floor; target: the 10,000-tool run ≤ 1.2× of it, both to the first tool call answered
 * and for the whole run, in each sandbox mode. Needs `npm run build` first (the prelude and the
 * worker entry load from dist/).
 *
 * The first run after a catalog change builds the per-catalog structures (bindings, name map,
 * the list a script reads if it enumerates `tools`); the figures are of the runs after it.
 *
 * Process mode: each runtime has its own worker, which refills its spare isolate only once
 * idle (~3 ms after a run ends). The interleaving puts two runs of one runtime back to back
 * every other round, and such a run waits for that refill, so half the samples of each catalog
 * were warm starts and half were not, and each p50 fell wherever the two clusters met (the
 * ratio swung 0.89–1.71× between runs of the same code). Each process-mode run therefore starts
 * after a pause of {@link PROCESS_SPARE_WAIT_MS}, as `sandbox.bench.ts` waits for the spare:
 * both catalogs are measured from the same state, a warm worker.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { parseConfig } from '../src/config/index.js';
import { CodecallRuntime } from '../src/execute/index.js';
import { createHostileServer, type HostileTool } from '../src/testing/servers/hostile-server.js';
import { inMemoryTransport } from '../src/testing/servers/in-memory.js';
import { figure, finish, hasBuild, nowUs, percentile } from './harness.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const SMALL_CATALOG = 10;
const LARGE_CATALOG = 10_000;
const RUNS = 150;
const WARMUP_RUNS = 20;
const TARGET_RATIO = 1.2;
/** Pause before each process-mode run, so its worker's spare isolate is ready (see above). */
const PROCESS_SPARE_WAIT_MS = 15;

if (!hasBuild(ROOT, ['sandbox/prelude.js', 'isolate/worker.js'])) {
  finish();
  process.exit();
}

function catalog(size: number): HostileTool[] {
  const tools: HostileTool[] = [];
  for (let i = 0; i < size; i++) {
    tools.push({
      name: `tool_${i}_${['list', 'get', 'update', 'delete'][i % 4]}_record`,
      description: `Tool ${i}: reads or changes record ${i}.`,
      inputSchema: { type: 'object', properties: { id: { type: 'number', description: 'Record id.' } } },
    });
  }
  return tools;
}

/** Tools per MCP server (the default `maxTools` of one server is 5,000). */
const TOOLS_PER_SERVER = 5_000;

async function openRuntime(
  size: number,
  mode: 'process' | 'in-process',
  dir: string,
): Promise<CodecallRuntime> {
  const all = catalog(size);
  const transports: Record<string, ReturnType<typeof inMemoryTransport>> = {};
  for (let start = 0, n = 0; start < all.length; start += TOOLS_PER_SERVER, n++) {
    const name = n === 0 ? 'records' : `records${n + 1}`;
    const server = createHostileServer({ name, tools: all.slice(start, start + TOOLS_PER_SERVER) });
    transports[name] = inMemoryTransport(server.create);
  }
  const config = parseConfig(
    { mcpServers: {}, sandbox: { mode, workers: 1 } },
    { file: join(dir, 'codecall.json'), env: {} },
  );
  const runtime = await CodecallRuntime.open({
    config,
    history: false,
    searchWorker: false,
    tools: { transports, requireAll: true },
  });
  if (runtime.tools.catalog().length !== size) {
    throw new Error(`expected ${size} tools, got ${runtime.tools.catalog().length}`);
  }
  return runtime;
}

const SCRIPT = 'const r = await tools.records.tool_1_get_record({ id: 1 }); console.log(r.id);';

interface Sample {
  firstCallUs: number;
  runUs: number;
}

async function runOnce(runtime: CodecallRuntime, mode: 'process' | 'in-process'): Promise<Sample> {
  if (mode === 'process') await new Promise((resolveWait) => setTimeout(resolveWait, PROCESS_SPARE_WAIT_MS));
  let firstCallUs = NaN;
  const started = nowUs();
  const result = await runtime.execute(SCRIPT, {
    learn: false,
    onToolResult: () => {
      if (Number.isNaN(firstCallUs)) firstCallUs = nowUs() - started;
    },
  });
  const runUs = nowUs() - started;
  if (result.status !== 'ok' || result.stdout !== '1\n') {
    throw new Error(`run failed: ${result.error?.code ?? ''} ${result.error?.message ?? result.stdout}`);
  }
  return { firstCallUs, runUs };
}

const dir = mkdtempSync(join(tmpdir(), 'codecall-catalog-bench-'));
try {
  for (const mode of ['in-process', 'process'] as const) {
    const small = await openRuntime(SMALL_CATALOG, mode, dir);
    const large = await openRuntime(LARGE_CATALOG, mode, dir);
    try {
      for (let i = 0; i < WARMUP_RUNS; i++) {
        await runOnce(small, mode);
        await runOnce(large, mode);
      }
      const samples = { small: [] as Sample[], large: [] as Sample[] };
      for (let i = 0; i < RUNS; i++) {
        // Interleaved, alternating which goes first, so drift and load hit both alike.
        if (i % 2 === 0) {
          samples.small.push(await runOnce(small, mode));
          samples.large.push(await runOnce(large, mode));
        } else {
          samples.large.push(await runOnce(large, mode));
          samples.small.push(await runOnce(small, mode));
        }
      }
      const p50 = (list: Sample[], key: keyof Sample) =>
        percentile(
          list.map((s) => s[key]),
          50,
        );
      console.log(
        `\n${mode}: ${RUNS} runs each, interleaved; load average ${loadavg()
          .map((n) => n.toFixed(2))
          .join(' ')}`,
      );
      figure(
        `${mode}: run → first call answered, ${SMALL_CATALOG} tools (floor), p50`,
        p50(samples.small, 'firstCallUs'),
        'µs',
      );
      figure(
        `${mode}: run → first call answered, ${LARGE_CATALOG} tools, p50`,
        p50(samples.large, 'firstCallUs'),
        'µs',
      );
      figure(
        `${mode}: first call, ${LARGE_CATALOG} ÷ ${SMALL_CATALOG} tools`,
        p50(samples.large, 'firstCallUs') / p50(samples.small, 'firstCallUs'),
        '×',
        { max: TARGET_RATIO },
      );
      figure(
        `${mode}: whole short run, ${SMALL_CATALOG} tools (floor), p50`,
        p50(samples.small, 'runUs'),
        'µs',
      );
      figure(`${mode}: whole short run, ${LARGE_CATALOG} tools, p50`, p50(samples.large, 'runUs'), 'µs');
      figure(
        `${mode}: whole run, ${LARGE_CATALOG} ÷ ${SMALL_CATALOG} tools`,
        p50(samples.large, 'runUs') / p50(samples.small, 'runUs'),
        '×',
        { max: TARGET_RATIO },
      );
    } finally {
      await Promise.allSettled([small.close(), large.close()]);
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
finish();
