/**
 * @module
 * The host's own checks of what arrives from a sandbox, independent of the prelude's checks (a
 * worker is a separate process; the host never trusts what crosses): tool-name length and the
 * bytes of arguments of calls not yet answered. The controller is driven directly, as an engine
 * would drive it, with a backend that records what the host answers.
 */
import { describe, expect, it } from 'vitest';

import type { EngineOutcome } from '../../../src/isolate/engine.js';
import { resolveSandboxLimits } from '../../../src/isolate/limits.js';
import { RunController, type RunBackend } from '../../../src/isolate/run-controller.js';
import type { ToolInvocation } from '../../../src/types.js';
import { withThreadCpu } from '../../fixtures/thread-cpu.js';

interface Answer {
  id: number;
  ok: boolean;
  payload: string | undefined;
  code: string | undefined;
}

/** A backend that records answers and ends when told. */
class RecordingBackend implements RunBackend {
  readonly answers: Answer[] = [];
  readonly outcome: Promise<EngineOutcome>;
  end!: () => void;
  #waiters: { count: number; resolve: () => void }[] = [];

  constructor() {
    this.outcome = new Promise((resolve) => (this.end = () => resolve({ ok: true, cpuMs: 0 })));
  }

  settle(id: number, ok: boolean, payload: string | undefined, code?: string): void {
    this.answers.push({ id, ok, payload, code });
    for (const waiter of this.#waiters.filter((entry) => this.answers.length >= entry.count))
      waiter.resolve();
  }

  cancel(): void {
    this.end();
  }

  /** Resolves once `count` answers have arrived. */
  answered(count: number): Promise<void> {
    if (this.answers.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ count, resolve }));
  }
}

/** Resolves after every pending microtask (each step of a call is one). */
function tick(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function start(invoke: (call: ToolInvocation) => Promise<unknown>, limits = {}) {
  const controller = new RunController({
    code: '',
    tools: [{ name: 'files.read', namespace: 'files', member: 'read' }],
    invoke,
    limits: resolveSandboxLimits(limits),
  });
  const backend = new RecordingBackend();
  const done = controller.run(() => backend);
  return { controller, backend, done };
}

describe('RunController: host-side bounds on what a sandbox sends', () => {
  it('rejects a tool name over the limit without a catalog scan, echoing only a prefix', async () => {
    let invoked = 0;
    const { controller, backend, done } = start(async () => ++invoked);
    const name = 'files.'.padEnd(5_000_000, 'x');
    const { cpuMs } = withThreadCpu(() => controller.call(1, name, '{}'));
    controller.call(2, 'files.raed', '{}');
    await backend.answered(2);
    backend.end();
    await done;
    expect(backend.answers[0]).toEqual({
      id: 1,
      ok: false,
      payload: `Unknown tool "files.${'x'.repeat(74)}… (5000000 characters)": tool names are at most 256 characters. Use the names in \`tools\`.`,
      code: 'UNKNOWN_TOOL',
    });
    // An edit distance against a 5-million-character name takes seconds of CPU; the length check
    // does not.
    expect(cpuMs).toBeLessThan(200);
    expect(backend.answers[1]).toMatchObject({ ok: false, code: 'UNKNOWN_TOOL' });
    expect(backend.answers[1]!.payload).toContain('Did you mean: tools.files.read?');
    expect(invoked).toBe(0);
  });

  it('accepts names up to the longest bound tool name even above the limit', async () => {
    const long = `files.${'r'.repeat(300)}`;
    const controller = new RunController({
      code: '',
      tools: [{ name: long, namespace: 'files', member: 'r'.repeat(300) }],
      invoke: async () => 'read',
      limits: resolveSandboxLimits({ maxToolNameChars: 16 }),
    });
    const backend = new RecordingBackend();
    const done = controller.run(() => backend);
    controller.call(1, long, '{}');
    await backend.answered(1);
    backend.end();
    await done;
    expect(backend.answers[0]).toEqual({ id: 1, ok: true, payload: '"read"', code: undefined });
  });

  it('bounds bytes of arguments waiting for an answer, and frees them when calls answer', async () => {
    const release: (() => void)[] = [];
    const { controller, backend, done } = start(
      () => new Promise((resolve) => release.push(() => resolve('done'))),
      { maxPendingToolArgsBytes: 3_000, maxConcurrentToolCalls: 1 },
    );
    const args = JSON.stringify({ blob: 'x'.repeat(1_000) }); // 1,011 bytes; the call costs 1,011 + 10 + 64
    controller.call(1, 'files.read', args); // in flight
    controller.call(2, 'files.read', args); // queued on the host
    controller.call(3, 'files.read', args); // would make 3,255 bytes pending
    await tick();
    expect(backend.answers).toHaveLength(1);
    expect(backend.answers[0]).toEqual({
      id: 3,
      ok: false,
      payload:
        'Arguments of tool calls waiting for an answer would exceed 3000 bytes of JSON (2170 pending now, this call adds 1085). Await earlier calls before starting more (for example in batches with Promise.all).',
      code: 'TOOL_ARGS_LIMIT',
    });
    expect(release).toHaveLength(1);
    release.shift()!(); // call 1 answers: its bytes are free again, and call 2 starts
    await tick();
    controller.call(4, 'files.read', args); // fits again
    await tick();
    expect(backend.answers.map((answer) => answer.id)).toEqual([3, 1]);
    release.shift()!(); // call 2 answers, call 4 starts
    await tick();
    release.shift()!(); // call 4 answers
    await tick();
    backend.end();
    await done;
    expect(backend.answers.map((answer) => [answer.id, answer.ok])).toEqual([
      [3, false],
      [1, true],
      [2, true],
      [4, true],
    ]);
  });
});
