/**
 * Delays past Node's timer ceiling (2^31 - 1 ms, about 24.8 days), which `setTimeout` fires after
 * 1 ms: a job whose deadline is 30 days ahead runs (it did not: it ended `expired`), waiting on a
 * job with a 2^31 ms timeout waits for its end, and an agent run with `maxRunTimeMs` 2^31 is not
 * stopped by `RUN_TIMEOUT` at once. The embedded backend against the real probe server.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrchestrator } from '../../../src/agent/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createLocalJobBackend, type JobBackend } from '../../../src/jobs/index.js';
import { ScriptedLanguageModel, text, toolCall } from '../../../src/testing/index.js';
import { probeConfig, startProbeServer, type ProbeServer } from './jobs-helpers.js';

const DAY_MS = 86_400_000;

describe('timers past 24.8 days', () => {
  let probe: ProbeServer;
  let config: { dir: string; path: string };
  let jobs: JobBackend;

  beforeAll(async () => {
    probe = await startProbeServer();
    config = probeConfig(probe.url);
    jobs = createLocalJobBackend({ runtimes: { configs: { default: config.path } }, concurrency: 1 });
  });

  afterAll(async () => {
    await jobs?.close();
    await probe?.close();
    if (config) rmSync(config.dir, { recursive: true, force: true });
  });

  it('runs a job whose deadline is 30 days ahead', async () => {
    const { id } = await jobs.submit({
      kind: 'exec',
      deadline: Date.now() + 30 * DAY_MS,
      code: 'const r = await tools.probe.record({ key: "far-deadline" }); console.log(r.count)',
    });
    const record = await jobs.wait(id);
    expect(record.result?.error).toBeUndefined();
    expect(record.result?.status).toBe('ok');
    expect(record.result?.exec?.stdout).toBe('1\n');
    expect(probe.counts.records.get('far-deadline')).toBe(1);
  });

  it('waits for a job with a timeout of 2^31 ms instead of timing out at once', async () => {
    const { id } = await jobs.submit({
      kind: 'exec',
      code: 'await tools.probe.sleep({ ms: 100, key: "long-wait" }); console.log("slept")',
    });
    const record = await jobs.wait(id, { timeoutMs: 2 ** 31 });
    expect(record.result?.status).toBe('ok');
    expect(record.result?.exec?.stdout).toBe('slept\n');
  });

  it('does not stop an agent run with maxRunTimeMs 2^31 (RUN_TIMEOUT at once before)', async () => {
    await using runtime = await CodecallRuntime.open({ load: { path: config.path }, history: false });
    // The script waits on a tool, so a timer that fired at once would stop the run first.
    const model = new ScriptedLanguageModel([
      toolCall('execute_code', {
        code: 'await tools.probe.sleep({ ms: 100, key: "long-run" }); console.log(6 * 7)',
      }),
      text('42'),
    ]);
    await using agent = await createOrchestrator({ model, runtime, maxRunTimeMs: 2 ** 31 });
    const result = await agent.run('Compute 6 * 7.');
    model.assertComplete();
    expect(result.answer).toBe('42');
    expect(probe.counts.sleeps.get('long-run')).toBe(1);
  });
});
