// The configuration is resolved once, in config/, into a fully required form: no field of
// CodecallConfig is optional (a setting that may be absent is `… | undefined`, always present as a
// key), so no reader downstream supplies a default of its own.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_AGENT_MAX_STEPS,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  DEFAULT_BEAM_WIDTH,
  DEFAULT_EMBEDDING_BATCH_SIZE,
  DEFAULT_EXPANSION_WHEN,
  DEFAULT_JOBS_QUEUE,
  DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS,
  DEFAULT_SERVE_PORT,
  DEFAULT_STORE_MAX_VALUE_BYTES,
  DEFAULT_TOOL_CALL_TIMEOUT_MS,
  IN_MEMORY_STORE_NAMESPACE,
} from '../../../src/config/defaults.js';
import { parseConfig, toolPolicyOf, type CodecallConfig } from '../../../src/config/index.js';

/** Keys of `T` that are not index signatures. */
type Known<T> = {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K];
};
/** Keys of `T` declared optional (`k?:`). */
type OptionalKeys<T> = {
  [K in keyof Known<T>]-?: object extends Pick<Known<T>, K> ? K : never;
}[keyof Known<T>];
/** Dotted paths of every optional field reachable in `T` (`serve.token`, `mcpServers.*.tools.*.timeoutMs`). */
type OptionalPaths<T, Depth extends unknown[] = []> = Depth['length'] extends 8
  ? never
  : T extends string | number | boolean | bigint | symbol | null | undefined | ((...args: never[]) => unknown)
    ? never
    : T extends readonly (infer U)[]
      ? OptionalPaths<U, [...Depth, 1]>
      : T extends object
        ? | (OptionalKeys<T> & string)
          | {
              [
                K in keyof T & string
              ]: `${string extends K ? '*' : K}.${OptionalPaths<T[K], [...Depth, 1]> & string}`;
            }[keyof T & string]
        : never;

/** `true` when `T` has no optional field at any depth; else the offending paths (a type error names them). */
type NoOptionalField<T> = [OptionalPaths<T>] extends [never] ? true : OptionalPaths<T>;

describe('the resolved configuration', () => {
  it('has no optional field at any depth (a type check: tsc fails with the paths)', () => {
    const fullyRequired: NoOptionalField<CodecallConfig> = true;
    // The checker above must see an optional field when one is there.
    const sees: NoOptionalField<{ a: { b?: number } }> = 'a.b';
    const seesInMaps: NoOptionalField<{ m: Record<string, { t?: string }> }> = 'm.*.t';
    expect([fullyRequired, sees, seesInMaps]).toEqual([true, 'a.b', 'm.*.t']);
  });

  it('fills every section with the defaults from an empty file', () => {
    const config = parseConfig({}, { file: '/project/codecall.json', env: {} });
    expect(config.serve.port).toBe(DEFAULT_SERVE_PORT);
    expect(config.serve.token).toBeUndefined();
    expect(config.serve.allowedOrigins).toEqual([]);
    expect(config.search.beamWidth).toBe(DEFAULT_BEAM_WIDTH);
    expect(config.search.expansionWhen).toBe(DEFAULT_EXPANSION_WHEN);
    expect(config.search.embeddings).toBeUndefined();
    expect(config.agent).toEqual({
      model: undefined,
      maxSteps: DEFAULT_AGENT_MAX_STEPS,
      maxOutputTokens: DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS,
    });
    expect(config.jobs.backend).toBe('local');
    expect(config.jobs.queue).toBe(DEFAULT_JOBS_QUEUE);
    expect(config.approvals).toEqual({ timeoutMs: DEFAULT_APPROVAL_TIMEOUT_MS, requireForDestructive: true });
    expect(config.store.namespace).toBe('/project/codecall.json');
    expect(config.store.maxValueBytes).toBe(DEFAULT_STORE_MAX_VALUE_BYTES);
    expect(parseConfig({}, { file: 'memory' }).store.namespace).toBe(IN_MEMORY_STORE_NAMESPACE);
    expect(config.clientPolicy).toEqual([]);
    // Every key of every section is present, even where its value is `undefined`.
    expect(Object.keys(config).sort()).toEqual(
      [
        'agent',
        'approvals',
        'clientFormat',
        'clientPolicy',
        'configDir',
        'configPath',
        'disabledServers',
        'history',
        'ignoredKeys',
        'jobs',
        'mcpServers',
        'notices',
        'resultHandles',
        'sandbox',
        'search',
        'serve',
        'store',
      ].sort(),
    );
  });

  it('resolves what the file gives: embeddings paths, a backend from the connection scheme, tool policies', () => {
    const config = parseConfig(
      {
        mcpServers: {
          s: { command: 'node', toolTimeoutMs: 5_000, deferLoading: false, tools: { t: { timeoutMs: 9 } } },
        },
        search: { embeddings: { baseUrl: 'http://127.0.0.1:1/v1', model: 'm', cache: 'vectors.sqlite' } },
        jobs: { connection: 'postgresql://u@127.0.0.1/db' },
      },
      { file: '/project/codecall.json', env: {} },
    );
    expect(config.search.embeddings).toMatchObject({
      cache: '/project/vectors.sqlite',
      batchSize: DEFAULT_EMBEDDING_BATCH_SIZE,
      apiKey: undefined,
    });
    expect(config.jobs.backend).toBe('postgres');
    expect(
      parseConfig({ jobs: { connection: 'redis://127.0.0.1:6379' } }, { file: 'memory' }).jobs.backend,
    ).toBe('bullmq');
    const server = config.mcpServers.s!;
    expect(toolPolicyOf(server, 't')).toMatchObject({ timeoutMs: 9, deferLoading: false, inputExamples: [] });
    // A tool the file does not list gets its server's values; a built-in name is never a policy.
    expect(toolPolicyOf(server, 'other')).toEqual({
      allowedCallers: undefined,
      requireApproval: undefined,
      deferLoading: false,
      inputExamples: [],
      timeoutMs: 5_000,
    });
    expect(toolPolicyOf(server, 'constructor').timeoutMs).toBe(5_000);
    expect(
      parseConfig({ mcpServers: { s: { command: 'node' } } }, { file: 'memory' }).mcpServers.s!.toolTimeoutMs,
    ).toBe(DEFAULT_TOOL_CALL_TIMEOUT_MS);
  });
});
