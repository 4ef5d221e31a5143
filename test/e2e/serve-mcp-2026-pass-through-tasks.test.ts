/**
 * Pass-through tools as tasks on `codecall serve --http` (the Tasks extension, SEP-2663), and a
 * script that awaits an upstream task: the suite's task fixture tools on a real SDK v2 server
 * (`src/testing/servers/conformance-2026-task-tools.ts`, loopback HTTP, 2026-07-28 only) behind
 * two serve nodes that share `CODECALL_REQUEST_STATE_KEY`, behind a plain round-robin proxy. The
 * unmodified SDK v2 client (pinned to 2026-07-28) follows a relayed task through both nodes with
 * `tasks/get`, answers its `input_required` with `tasks/update`, cancels one with `tasks/cancel`
 * (observed by the upstream); the `tools/call` that creates a task is sent as the same 2026 request
 * by hand (SDK 2.4's client refuses a `resultType: "task"` answer).
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  startConformanceTaskEndpoint,
  type ConformanceTaskEndpoint,
} from '../../src/testing/servers/conformance-2026-task-tools.js';
import type { ServeProcess } from './serve-helpers.js';
import {
  TASKS,
  connect2026,
  getTask,
  pollUntil,
  resultText,
  roundRobin,
  startServe2026,
  terminal,
  type RoundRobinProxy,
} from './mcp-2026-helpers.js';

const serves: ServeProcess[] = [];
let fixture: ConformanceTaskEndpoint;
let proxy: RoundRobinProxy;
let client: Client;
const dir = mkdtempSync(join(tmpdir(), 'codecall-pass-through-tasks-'));

beforeAll(async () => {
  fixture = await startConformanceTaskEndpoint({ pollIntervalMs: 100 });
  const configPath = join(dir, 'codecall.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        tasks: {
          type: 'http',
          url: fixture.url,
          protocol: '2026-07-28',
          allowedCallers: ['direct', 'code_execution'],
          deferLoading: false,
        },
      },
      history: { path: join(dir, 'history.sqlite') },
      serve: { originalNames: true, waitForServersMs: 60_000 },
    }),
  );
  const env = { CODECALL_REQUEST_STATE_KEY: randomBytes(32).toString('hex') };
  const nodes = [
    await startServe2026(serves, configPath, [], env),
    await startServe2026(serves, configPath, [], env),
  ];
  proxy = await roundRobin(nodes.map((node) => node.url));
  client = await connect2026(proxy.url, { name: 'e2e-pass-through-tasks', tasks: true });
}, 120_000);

afterAll(async () => {
  await client?.close();
  for (const serve of serves) if (serve.child.exitCode === null) serve.child.kill('SIGTERM');
  await Promise.all(serves.map((s) => s.exited));
  proxy?.server.close();
  await fixture?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A 2026 `tools/call` as the SDK client sends it, declaring the extension or not. */
async function rawCall(
  name: string,
  args: Record<string, unknown>,
  tasks = true,
): Promise<{ result?: Record<string, unknown>; error?: { code: number; data?: unknown } }> {
  const response = await fetch(proxy.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'e2e-pass-through-raw', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': tasks ? { extensions: { [TASKS]: {} } } : {},
        },
      },
    }),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: { code: number } };
}

async function createTask(name: string, args: Record<string, unknown>): Promise<string> {
  const answer = await rawCall(name, args);
  expect(answer.result, JSON.stringify(answer)).toMatchObject({ resultType: 'task', status: 'working' });
  expect(answer.result).not.toHaveProperty('result');
  return answer.result!.taskId as string;
}

const Ack = z.looseObject({});

describe('pass-through tools as tasks (2026-07-28)', { timeout: 120_000 }, () => {
  it('advertises the extension; a sync-only tool stays sync; a task-supporting one is relayed and followed through both nodes', async () => {
    expect(client.getServerCapabilities()?.extensions).toEqual({ [TASKS]: {} });
    const greeting = await client.callTool({ name: 'greet', arguments: { name: 'World' } });
    expect(resultText(greeting)).toBe('Hello, World!');

    const before = [...proxy.hits];
    const taskId = await createTask('slow_compute', { seconds: 1.5, label: 'relay' });
    expect(taskId).toMatch(/^ct1\./);
    const { task, seen } = await pollUntil(client, taskId, terminal);
    expect(task.status).toBe('completed');
    expect(task.taskId).toBe(taskId);
    expect(resultText(task.result)).toBe('slow_compute relay: done after 1.5 s');
    expect(seen[0]).toBe('working');
    // The polls went to both nodes (round robin), and each answered by forwarding upstream.
    expect(proxy.hits.every((hits, index) => hits > before[index]!)).toBe(true);
    expect(fixture.state.events.filter((e) => e.method === 'tasks/get').length).toBeGreaterThanOrEqual(2);
  });

  it("relays an input_required task's inputRequests and the client's tasks/update, and a failed task's error", async () => {
    const taskId = await createTask('confirm_delete', { filename: 'a.txt' });
    const { task } = await pollUntil(client, taskId, (t) => t.status === 'input_required' || terminal(t));
    expect(task.status).toBe('input_required');
    expect(task.inputRequests?.confirm).toMatchObject({ method: 'elicitation/create' });
    const ack = await client.request(
      {
        method: 'tasks/update',
        params: { taskId, inputResponses: { confirm: { action: 'accept', content: { confirm: true } } } },
      },
      Ack,
    );
    // An ack: no task envelope (the SDK may add its own _meta).
    expect(Object.keys(ack).filter((key) => key !== '_meta')).toEqual([]);
    const done = await pollUntil(client, taskId, terminal);
    expect(resultText(done.task.result)).toBe('Deleted a.txt.');

    const failedId = await createTask('protocol_error_job', {});
    const failed = await pollUntil(client, failedId, terminal);
    expect(failed.task).toMatchObject({ status: 'failed', error: { code: -32603 } });
    expect(failed.task).not.toHaveProperty('result');
  });

  it('tasks/cancel reaches the upstream, and the task settles cancelled', async () => {
    const taskId = await createTask('slow_compute', { seconds: 60 });
    const seenBefore = fixture.state.events.filter((e) => e.method === 'tasks/cancel').length;
    await client.request({ method: 'tasks/cancel', params: { taskId } }, Ack);
    const cancels = fixture.state.events.filter((e) => e.method === 'tasks/cancel');
    expect(cancels.length).toBe(seenBefore + 1);
    expect(fixture.state.status(cancels.at(-1)!.taskId)).toBe('cancelled');
    expect((await getTask(client, taskId)).status).toBe('cancelled');
  });

  it('refuses a forged or altered task id with -32602, before anything reaches the upstream', async () => {
    const taskId = await createTask('slow_compute', { seconds: 0 });
    const [payload, signature] = taskId.slice('ct1.'.length).split('.') as [string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forgedPayload = Buffer.from(JSON.stringify({ ...claims, c: 'someone-else' })).toString('base64url');
    const gets = fixture.state.events.length;
    for (const forged of [
      `ct1.${forgedPayload}.${signature}`,
      `ct1.${payload}.${'A'.repeat(signature.length)}`,
    ]) {
      const code = await getTask(client, forged).then(
        () => 'answered',
        (error: { code?: unknown }) => error.code,
      );
      expect(code).toBe(-32602);
    }
    expect(fixture.state.events.length).toBe(gets);
  });

  it('a client without the extension: a tool the upstream runs only as a task answers -32021; others answer in the request', async () => {
    const refused = await rawCall('failing_job', {}, false);
    expect(refused.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
    const sync = await rawCall('slow_compute', { seconds: 0, label: 'plain' }, false);
    expect(sync.result).toMatchObject({
      content: [{ type: 'text', text: 'slow_compute plain: done after 0 s' }],
    });
    expect(sync.result).not.toHaveProperty('taskId');
  });

  it("a script's call to a tool that answers with a task awaits it (execute_code in the request)", async () => {
    const plain = await connect2026(proxy.url, { name: 'e2e-pass-through-script' });
    try {
      const result = await plain.callTool({
        name: 'execute_code',
        arguments: {
          code: 'console.log(await tools.tasks.failing_job({}).catch((e) => "caught: " + e.message));',
        },
      });
      expect(resultText(result)).toMatch(/caught: .*failing_job: the job failed/);
    } finally {
      await plain.close();
    }
  });
});
