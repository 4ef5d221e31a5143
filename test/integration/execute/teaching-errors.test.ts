/**
 * Errors that teach (issue 29), in both sandbox modes: a tool call whose promise was never
 * awaited is reported ("did you forget `await`?"), a printed promise says the same, and a
 * TypeError on a value that came from a tool result names the result's type and keys (never a
 * value of it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import type { SandboxMode } from '../../../src/isolate/index.js';
import { defineTool, localTools } from '../../../src/tools/index.js';

const SECRET = 'hunter2-value-never-shown';
const tools = [
  defineTool({
    name: 'get_expenses',
    description: 'Expenses of a member.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    execute: () => ({ items: [{ id: 1, amount: 5, note: SECRET }], total: 1, nextOffset: 20 }),
  }),
  defineTool({
    name: 'slow',
    description: 'Answers after a while.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    execute: async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      return { done: true };
    },
  }),
];

const dir = mkdtempSync(join(tmpdir(), 'codecall-teaching-'));
const runtimes = new Map<SandboxMode, CodecallRuntime>();

beforeAll(async () => {
  for (const mode of ['in-process', 'process'] as const) {
    const config = parseConfig(
      { sandbox: { mode, workers: 1 } },
      { file: join(dir, 'codecall.json'), env: {} },
    );
    runtimes.set(
      mode,
      await CodecallRuntime.open({
        config,
        history: false,
        tools: { transports: { local: localTools(tools) } },
      }),
    );
  }
}, 120_000);

afterAll(async () => {
  for (const runtime of runtimes.values()) await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['in-process', 'process'] as const)('errors that teach (%s)', (mode) => {
  it('a TypeError on a tool result names its type and keys, never its values', async () => {
    const result = await runtimes
      .get(mode)!
      .execute(
        'const ex = await tools.local.get_expenses(); console.log(ex.filter((e) => e.amount > 1).length);',
      );
    expect(result.status).toBe('error');
    const message = result.error!.message;
    expect(message).toMatch(/ex\.filter is not a function/);
    expect(message).toContain(
      'local.get_expenses(…) returned an object { items: an array of 1 objects, total: number, nextOffset: number }',
    );
    expect(message).not.toContain(SECRET);
  });

  it('a tool call left unawaited when the script ends is reported on stderr', async () => {
    const result = await runtimes.get(mode)!.execute('tools.local.slow(); console.log("end");');
    expect(result.status).toBe('ok');
    expect(result.stderr).toMatch(
      /note: 1 tool call \(local\.slow\) had not finished when the script ended: did you forget `await`\?/,
    );
  });

  it('a printed promise asks about await', async () => {
    const result = await runtimes
      .get(mode)!
      .execute('const r = tools.local.get_expenses(); console.log(r); await r;');
    expect(result.stdout).toBe('Promise { … } (did you forget `await`?)\n');
  });

  it('an awaited run carries no note', async () => {
    const result = await runtimes.get(mode)!.execute('await tools.local.slow(); console.log("end");');
    expect(result.stderr).toBe('');
  });
});
