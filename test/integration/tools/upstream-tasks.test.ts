/**
 * An upstream tool that must run as a task (`execution.taskSupport: "required"`, MCP 2025-11-25
 * tasks) is awaited transparently by a script: codecall creates the task, polls `tasks/get`
 * within bounds, reads `tasks/result`, and cancels the task when the call times out or the run is
 * aborted. A real runtime and a real SDK `McpServer` with the SDK's own task store upstream,
 * over an in-memory pair.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { inMemoryTransport } from '../../../src/testing/servers/index.js';

/** How many times the server read a task's status (each `tasks/get` poll is one). */
let polls = 0;
class CountingTaskStore extends InMemoryTaskStore {
  override getTask(
    ...args: Parameters<InMemoryTaskStore['getTask']>
  ): ReturnType<InMemoryTaskStore['getTask']> {
    polls++;
    return super.getTask(...args);
  }
}
const store = new CountingTaskStore();
/** Task ids the server created, in order. */
const created: string[] = [];

function taskServer(): McpServer {
  const server = new McpServer(
    { name: 'tasks', version: '1.0.0' },
    { capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {} } }, taskStore: store },
  );
  server.experimental.tasks.registerToolTask(
    'slow_sum',
    {
      description: 'Adds two numbers, slowly, as a task.',
      inputSchema: { a: z.number(), b: z.number() },
      execution: { taskSupport: 'required' },
    },
    {
      async createTask({ a, b }, { taskStore }) {
        const task = await taskStore.createTask({ ttl: 60_000, pollInterval: 0 });
        created.push(task.taskId);
        setTimeout(() => {
          void taskStore.storeTaskResult(task.taskId, 'completed', {
            content: [{ type: 'text', text: JSON.stringify({ sum: a + b }) }],
            structuredContent: { sum: a + b },
          });
        }, 300);
        return { task };
      },
      async getTask(_args, { taskId, taskStore }) {
        return (await taskStore.getTask(taskId))!;
      },
      async getTaskResult(_args, { taskId, taskStore }) {
        return (await taskStore.getTaskResult(taskId)) as never;
      },
    },
  );
  server.experimental.tasks.registerToolTask(
    'never_done',
    { description: 'Starts a task that never ends.', execution: { taskSupport: 'required' } },
    {
      async createTask({ taskStore }) {
        const task = await taskStore.createTask({ ttl: 60_000, pollInterval: 100 });
        created.push(task.taskId);
        return { task };
      },
      async getTask({ taskId, taskStore }) {
        return (await taskStore.getTask(taskId))!;
      },
      async getTaskResult({ taskId, taskStore }) {
        return (await taskStore.getTaskResult(taskId)) as never;
      },
    },
  );
  return server;
}

const dir = mkdtempSync(join(tmpdir(), 'codecall-upstream-tasks-'));
let runtime: CodecallRuntime;

beforeAll(async () => {
  const configPath = join(dir, 'codecall.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        tasks: {
          command: 'unused',
          deferLoading: false,
          allowedCallers: ['direct', 'code_execution'],
          tools: { never_done: { timeoutMs: 1_500 } },
        },
      },
      sandbox: { cpuTimeMs: 5_000, wallTimeMs: 60_000, memoryMb: 64 },
      history: { enabled: false },
    }),
  );
  runtime = await CodecallRuntime.open({
    load: { path: configPath },
    history: false,
    tools: { transports: { tasks: inMemoryTransport(taskServer) } },
  });
});

afterAll(async () => {
  await runtime?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('upstream tools that run as tasks', () => {
  it('a script awaits the task result like any call (bounded polling: a 0 ms pollInterval does not spin)', async () => {
    polls = 0;
    const result = await runtime.execute(
      'const r = await tools.tasks.slow_sum({ a: 2, b: 40 }); console.log(r.sum);',
    );
    expect(result.stdout.trim()).toBe('42');
    expect(result.status).toBe('ok');
    // 300 ms of work polled at the 50 ms floor: a handful of polls, not thousands.
    expect(polls).toBeGreaterThan(0);
    expect(polls).toBeLessThan(20);
  });

  it("a task past the tool's timeout fails the call with TOOL_TIMEOUT and is cancelled upstream", async () => {
    const result = await runtime.execute('await tools.tasks.never_done({});');
    expect(result.status).toBe('error');
    expect(result.error?.message).toMatch(/did not answer within 1500 ms/);
    const taskId = created.at(-1)!;
    await expect
      .poll(async () => (await store.getTask(taskId))?.status, { timeout: 10_000 })
      .toBe('cancelled');
  });

  it('an aborted run cancels its task upstream', async () => {
    const controller = new AbortController();
    const before = created.length;
    const run = runtime.execute('await tools.tasks.never_done({});', { signal: controller.signal });
    await expect.poll(() => created.length, { timeout: 10_000 }).toBe(before + 1);
    controller.abort(new Error('client went away'));
    const result = await run;
    expect(result.status).toBe('error');
    const taskId = created.at(-1)!;
    await expect
      .poll(async () => (await store.getTask(taskId))?.status, { timeout: 10_000 })
      .toBe('cancelled');
  });
});
