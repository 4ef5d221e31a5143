/**
 * The Tasks extension (SEP-2663) on codecall's upstream side: a real SDK v2 server (the suite's
 * task fixture tools, `src/testing/servers/conformance-2026-task-tools.ts`) over loopback HTTP,
 * connected with `protocol: "2026-07-28"`. A call whose answer is a `CreateTaskResult` is awaited
 * transparently (`tasks/get`), its `input_required` answered through the call's asker
 * (`tasks/update`), and cancelled upstream (`tasks/cancel`) on abort or timeout; the fixture
 * records each task method it gets.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import {
  startConformanceTaskEndpoint,
  type ConformanceTaskEndpoint,
} from '../../../src/testing/servers/conformance-2026-task-tools.js';
import { ToolPool, upstreamTaskOf, type UpstreamAsker } from '../../../src/tools/index.js';

const cleanup: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of cleanup.splice(0).reverse()) await item.close();
});

const code = { caller: 'code_execution' } as const;

async function fixture(): Promise<ConformanceTaskEndpoint> {
  const endpoint = await startConformanceTaskEndpoint({ pollIntervalMs: 50 });
  cleanup.push(endpoint);
  return endpoint;
}

async function open(url: string, extra: Record<string, unknown> = {}): Promise<ToolPool> {
  const config = parseConfig(
    {
      mcpServers: {
        up: {
          type: 'http',
          url,
          protocol: '2026-07-28',
          allowedCallers: ['direct', 'code_execution'],
          ...extra,
        },
      },
    },
    { file: '/project/codecall.json', env: {} },
  );
  const pool = await ToolPool.open(config, { requireAll: true });
  cleanup.push(pool);
  return pool;
}

/** Waits (bounded) until `check` holds. */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let waited = 0; waited < 30_000; waited += 25) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function cancelsOf(endpoint: ConformanceTaskEndpoint): string[] {
  return endpoint.state.events
    .filter((event) => event.method === 'tasks/cancel')
    .map((event) => event.taskId);
}

describe('upstream Tasks extension (2026-07-28)', { timeout: 60_000 }, () => {
  it('declares the extension, gets a task for slow_compute and awaits its result through tasks/get', async () => {
    const endpoint = await fixture();
    const pool = await open(endpoint.url);
    const value = await pool.call('up.slow_compute', { seconds: 0.3, label: 'x' }, code);
    expect(value).toBe('slow_compute x: done after 0.3 s');
    const [task] = [...endpoint.state.tasks.values()];
    expect(task?.status).toBe('completed');
    expect(endpoint.state.events.some((e) => e.method === 'tasks/get' && e.taskId === task?.id)).toBe(true);
    expect(cancelsOf(endpoint)).toEqual([]);
  });

  it('a completed task with isError fails the call with the tool error; a failed task with its JSON-RPC error', async () => {
    const endpoint = await fixture();
    const pool = await open(endpoint.url);
    await expect(pool.call('up.failing_job', {}, code)).rejects.toMatchObject({
      code: 'TOOL_CALL_FAILED',
      message: expect.stringContaining('failing_job: the job failed') as string,
    });
    await expect(pool.call('up.protocol_error_job', {}, code)).rejects.toMatchObject({
      code: 'TOOL_CALL_FAILED',
      message: expect.stringMatching(
        /failed the task it ran the call as \(-32603: protocol_error_job: internal failure\)/,
      ) as string,
    });
  });

  it("answers an input_required task's inputRequests through the call's asker and tasks/update, one key at a time", async () => {
    const endpoint = await fixture();
    const pool = await open(endpoint.url);
    const asked: string[] = [];
    const asker: UpstreamAsker = async (request) => {
      const message = String((request.params as { message?: unknown }).message);
      asked.push(message);
      return message === 'Your name?'
        ? { action: 'accept', content: { name: 'Ada' } }
        : { action: 'accept', content: { confirm: true } };
    };
    const deleted = await pool.callResult(
      'up.confirm_delete',
      { filename: 'a.txt' },
      { caller: 'direct', asker },
    );
    expect(deleted.content).toEqual([{ type: 'text', text: 'Deleted a.txt.' }]);
    const both = await pool.callResult('up.multi_input', {}, { caller: 'direct', asker });
    expect(both.content).toEqual([{ type: 'text', text: 'name=Ada, confirm=true' }]);
    expect(asked).toEqual(['Delete a.txt?', 'Your name?', 'Go ahead?']);
    expect(endpoint.state.events.filter((e) => e.method === 'tasks/update')).toHaveLength(2);
    // Without an asker the call fails as a plain input_required one does (the pool's routing has
    // no client to ask), and the task is cancelled upstream.
    await expect(pool.call('up.confirm_delete', { filename: 'b.txt' }, code)).rejects.toThrow(
      /codecall cannot forward this elicitation request \(elicitation\/create\)/,
    );
    await until(() => cancelsOf(endpoint).length === 1, 'the tasks/cancel of the unanswerable task');
  });

  it("a script's abort cancels the upstream task (tasks/cancel reaches the server)", async () => {
    const endpoint = await fixture();
    const dir = mkdtempSync(join(tmpdir(), 'codecall-upstream-tasks-'));
    cleanup.push({ close: async () => rmSync(dir, { recursive: true, force: true }) });
    const configPath = join(dir, 'codecall.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        mcpServers: {
          up: { type: 'http', url: endpoint.url, protocol: '2026-07-28', allowedCallers: ['code_execution'] },
        },
        sandbox: { cpuTimeMs: 5_000, wallTimeMs: 60_000, memoryMb: 64 },
        history: { enabled: false },
      }),
    );
    const runtime = await CodecallRuntime.open({ load: { path: configPath }, history: false });
    cleanup.push(runtime);
    const controller = new AbortController();
    const run = runtime.execute('console.log(await tools.up.slow_compute({ seconds: 60 }));', {
      signal: controller.signal,
    });
    await until(() => [...endpoint.state.tasks.values()].some((t) => t.status === 'working'), 'the task');
    const [task] = [...endpoint.state.tasks.values()];
    controller.abort(new Error('stop'));
    const result = await run;
    expect(result.status).toBe('error');
    await until(() => cancelsOf(endpoint).includes(task!.id), 'tasks/cancel of the aborted call');
    expect(endpoint.state.status(task!.id)).toBe('cancelled');
  });

  it('an abort while the task-creating call is still in flight cancels the task its late answer names', async () => {
    const endpoint = await fixture();
    // A loopback proxy that holds every tools/call answer: the server has created the task, the
    // answer naming it has not reached codecall yet when the call is aborted.
    const held: (() => void)[] = [];
    const proxy = createServer((request, response) => {
      void (async () => {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        const body = Buffer.concat(chunks);
        const headers = new Headers();
        for (const [key, value] of Object.entries(request.headers))
          if (typeof value === 'string' && key !== 'host' && key !== 'content-length')
            headers.set(key, value);
        const answer = await fetch(new URL(request.url ?? '/', endpoint.url), {
          method: request.method ?? 'GET',
          headers,
          ...(request.method === 'GET' || request.method === 'HEAD' ? {} : { body }),
        });
        const text = Buffer.from(await answer.arrayBuffer());
        if (body.toString('utf8').includes('"tools/call"')) await new Promise<void>((go) => held.push(go));
        response.writeHead(answer.status, Object.fromEntries(answer.headers));
        response.end(text);
      })().catch((error: unknown) => {
        if (!response.headersSent) response.writeHead(502);
        response.end(String(error));
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    cleanup.push({
      close: async () => {
        for (const go of held.splice(0)) go();
        proxy.closeAllConnections();
        await new Promise<void>((resolve) => proxy.close(() => resolve()));
      },
    });
    const pool = await open(
      `http://127.0.0.1:${(proxy.address() as AddressInfo).port}${new URL(endpoint.url).pathname}`,
    );
    const controller = new AbortController();
    const call = pool.call('up.slow_compute', { seconds: 60 }, { ...code, signal: controller.signal });
    await until(() => held.length === 1, 'the held tools/call answer');
    const [task] = [...endpoint.state.tasks.values()];
    expect(task?.status).toBe('working');
    controller.abort(new Error('stop'));
    await expect(call).rejects.toMatchObject({ code: 'ABORTED' });
    // The answer naming the task arrives after the abort: codecall reads it and cancels the task.
    held.shift()!();
    await until(
      () => cancelsOf(endpoint).includes(task!.id),
      'tasks/cancel of the task the late answer named',
    );
    expect(endpoint.state.status(task!.id)).toBe('cancelled');
  });

  it('a task past the tool timeout fails the call with TOOL_TIMEOUT and is cancelled upstream', async () => {
    const endpoint = await fixture();
    const pool = await open(endpoint.url, { toolTimeoutMs: 1_500 });
    await expect(pool.call('up.slow_compute', { seconds: 60 }, code)).rejects.toMatchObject({
      code: 'TOOL_TIMEOUT',
    });
    const [task] = [...endpoint.state.tasks.values()];
    await until(() => cancelsOf(endpoint).includes(task!.id), 'tasks/cancel of the timed-out call');
  });

  it('relay hands the task over unawaited; undeclared does not declare the extension (a required tool answers -32021)', async () => {
    const endpoint = await fixture();
    const pool = await open(endpoint.url);
    const relayed = await pool.callResult(
      'up.slow_compute',
      { seconds: 60 },
      { caller: 'direct', upstreamTask: 'relay' },
    );
    const task = upstreamTaskOf(relayed);
    expect(task).toMatchObject({ status: 'working', ttlMs: 60_000, pollIntervalMs: 50 });
    expect(endpoint.state.status(task!.taskId)).toBe('working');
    expect(endpoint.state.events).toEqual([]);
    const plain = await pool.callResult(
      'up.slow_compute',
      { seconds: 0, label: 'sync' },
      { caller: 'direct', upstreamTask: 'undeclared' },
    );
    expect(upstreamTaskOf(plain)).toBeUndefined();
    expect(plain.content).toEqual([{ type: 'text', text: 'slow_compute sync: done after 0 s' }]);
    await expect(
      pool.callResult('up.failing_job', {}, { caller: 'direct', upstreamTask: 'undeclared' }),
    ).rejects.toMatchObject({ code: 'TOOL_CALL_FAILED', details: { mcpCode: -32021 } });
  });
});
