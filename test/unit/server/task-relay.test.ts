/**
 * The relayed task id of a pass-through tool's upstream task (`src/server/task-relay.ts`): bound
 * to the client it was minted for, to the key that signed it, and to its expiry. Each refusal is
 * the spec's `-32602` and happens before anything is forwarded; an id that verifies goes on to
 * its upstream (here a server name the runtime does not have, so the forward itself fails, which
 * is how the test tells "verified" from "refused").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServerContext } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createTaskRelay } from '../../../src/server/task-relay.js';
import { readUpstreamTask, relayedTaskResult, type UpstreamTask } from '../../../src/tools/index.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-task-relay-'));
let runtime: CodecallRuntime;
beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    config: parseConfig({ mcpServers: {} }, { file: join(dir, 'codecall.json'), env: {} }),
    history: false,
  });
});
afterAll(async () => {
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

const ctx = { mcpReq: { signal: new AbortController().signal } } as unknown as ServerContext;
const KEY = 'k'.repeat(32);

function upstreamTask(ttlMs: number | null): UpstreamTask {
  const task = readUpstreamTask({
    taskId: 'up-1',
    status: 'working',
    createdAt: '2026-07-28T00:00:00Z',
    lastUpdatedAt: '2026-07-28T00:00:00Z',
    ttlMs,
  });
  if ('why' in task) throw new Error(task.why);
  return task;
}

const codeOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => 'answered',
    (error: { code?: unknown }) => error.code,
  );

describe('relayed task ids', () => {
  it('verify for the client they were minted for, and only for it', async () => {
    const relay = createTaskRelay({ runtime, key: KEY });
    const created = relay.created(relayedTaskResult(upstreamTask(60_000)), 'gone', 'client-a');
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 60_000 });
    const taskId = created!.taskId as string;
    expect(relay.owns(taskId)).toBe(true);
    // Verified, so forwarded: the runtime has no server "gone" (-32603, naming it).
    expect(await codeOf(relay.get(taskId, 'client-a', ctx))).toBe(-32603);
    expect(await codeOf(relay.get(taskId, 'client-b', ctx))).toBe(-32602);
    expect(await codeOf(relay.cancel(taskId, 'client-b', ctx))).toBe(-32602);
  });

  it('are refused under another key, past their expiry, or past the length bound', async () => {
    const relay = createTaskRelay({ runtime, key: KEY });
    const taskId = relay.created(relayedTaskResult(upstreamTask(60_000)), 'gone', 'client-a')!
      .taskId as string;
    const other = createTaskRelay({ runtime, key: 'o'.repeat(32) });
    expect(await codeOf(other.get(taskId, 'client-a', ctx))).toBe(-32602);
    const short = relay.created(relayedTaskResult(upstreamTask(1)), 'gone', 'client-a')!.taskId as string;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await codeOf(relay.get(short, 'client-a', ctx))).toBe(-32602);
    expect(await codeOf(relay.get(`${taskId}${'x'.repeat(2_000)}`, 'client-a', ctx))).toBe(-32602);
  });

  it('stand only for results that carry an upstream task', () => {
    const relay = createTaskRelay({ runtime, key: KEY });
    expect(relay.created({ content: [], taskId: 'forged-by-json' }, 'gone', 'client-a')).toBeUndefined();
  });
});
