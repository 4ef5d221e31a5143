/**
 * A pass-through call to a 2026-07-28 upstream, relayed faithfully to a 2026-07-28 client (issue
 * 28): the unmodified SDK v2 client (`@modelcontextprotocol/client`) talks to two
 * `codecall serve --http --mcp-2026` nodes behind a plain round-robin proxy; both reach one SDK v2
 * upstream (the 2026 conformance fixture over Streamable HTTP on loopback) and a 2025 upstream (the
 * 2025 conformance fixture over stdio). The upstream's `input_required` rounds reach the client
 * with codecall's signed state, and each retry lands on the other node; the client's capabilities
 * reach the upstream; tampered or foreign state and malformed answers are protocol errors; the
 * upstream's progress and JSON-RPC errors come through as they were sent.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createConformanceServer2026 } from '../../src/testing/servers/conformance-server-2026.js';
import { answerWithMcpHandler } from '../../src/testing/servers/mcp-handler-http.js';
import { ROOT, type ServeProcess } from './serve-helpers.js';
import { resultText, roundRobin, startServe2026 } from './mcp-2026-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-relay-2026-'));
const serves: ServeProcess[] = [];
const servers: Server[] = [];
/** Every `tools/call` the 2026 upstream got: which tool, and whether it carried a requestState. */
const upstreamCalls: { name: string; requestState: boolean; capabilities: unknown }[] = [];
/** Every `prompts/get` and `resources/read` it got: the method, and whether it carried a requestState. */
const upstreamReads: { method: string; requestState: boolean; inputResponses: unknown }[] = [];
let proxyUrl = '';
/** One node's own URL (not behind the proxy). */
let nodeUrl = '';
let hits: number[] = [];

/** The 2026 fixture over Streamable HTTP (the SDK's web-standard handler behind node:http). */
async function startUpstream(): Promise<string> {
  const handler = createMcpHandler(() => createConformanceServer2026({ inputRequiredResource: true }), {
    legacy: 'reject',
  });
  const server = createServer((incoming, outgoing) => {
    answerWithMcpHandler(handler, incoming, outgoing, (body) => {
      if (body.method === 'tools/call') {
        const params = body.params as {
          name: string;
          requestState?: unknown;
          _meta?: Record<string, unknown>;
        };
        upstreamCalls.push({
          name: params.name,
          requestState: params.requestState !== undefined,
          capabilities: params._meta?.['io.modelcontextprotocol/clientCapabilities'],
        });
      }
      if (body.method === 'prompts/get' || body.method === 'resources/read') {
        const params = body.params as { requestState?: unknown; inputResponses?: unknown };
        upstreamReads.push({
          method: body.method,
          requestState: params.requestState !== undefined,
          inputResponses: params.inputResponses,
        });
      }
    }).catch(() => outgoing.destroy());
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

beforeAll(async () => {
  const upstream = await startUpstream();
  const configPath = join(dir, 'codecall.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        fixture: {
          command: process.execPath,
          args: [join(ROOT, 'test', 'fixtures', 'servers', 'conformance-server.mjs')],
          deferLoading: false,
        },
        fixture2026: { type: 'http', url: upstream, protocol: '2026-07-28', deferLoading: false },
      },
      history: { path: join(dir, 'history.sqlite') },
      serve: { originalNames: true, waitForServersMs: 60_000 },
    }),
  );
  // One signing key for both nodes: a round minted by one is verified by the other.
  const env = { CODECALL_REQUEST_STATE_KEY: randomBytes(32).toString('hex') };
  const nodes = await Promise.all([
    startServe2026(serves, configPath, [], env),
    startServe2026(serves, configPath, [], env),
  ]);
  const proxy = await roundRobin(nodes.map((n) => n.url));
  servers.push(proxy.server);
  proxyUrl = proxy.url;
  hits = proxy.hits;
  nodeUrl = nodes[0]!.url;
}, 120_000);

afterAll(async () => {
  for (const server of servers) server.close();
  for (const serve of serves) if (serve.child.exitCode === null) serve.child.kill('SIGTERM');
  await Promise.all(serves.map((s) => s.exited));
  rmSync(dir, { recursive: true, force: true });
});

/** The SDK v2 client pinned to 2026-07-28, answering rounds from its handlers (auto-fulfilment). */
async function connect(
  capabilities: Record<string, unknown>,
  answers: string[],
  url = proxyUrl,
): Promise<Client> {
  const client = new Client(
    { name: 'e2e-relay', version: '1.0.0' },
    {
      capabilities,
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  if (capabilities.elicitation !== undefined)
    client.setRequestHandler('elicitation/create', (request) => {
      answers.push(request.params.message);
      return { action: 'accept', content: { name: 'Ada', color: 'teal' } };
    });
  if (capabilities.sampling !== undefined)
    client.setRequestHandler('sampling/createMessage', () => ({
      role: 'assistant',
      content: { type: 'text', text: 'Paris' },
      model: 'e2e',
    }));
  if (capabilities.roots !== undefined)
    client.setRequestHandler('roots/list', () => ({ roots: [{ uri: 'file:///work/e2e', name: 'e2e' }] }));
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/** One raw 2026 request of `method` (JSON-RPC body and answer as sent). */
async function rawRequest(
  method: string,
  params: Record<string, unknown>,
  name: string,
): Promise<{ status: number; result?: Record<string, unknown>; error?: { code: number; message: string } }> {
  const response = await fetch(proxyUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      'mcp-name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'e2e-relay-raw', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } },
        },
      },
    }),
  });
  const text = await response.text();
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return { status: response.status, ...(JSON.parse(json) as object) };
}

/** What a prompt's or a read's answer says in text. */
function textsOf(result: unknown): string {
  const r = result as {
    messages?: { content: { text?: string } }[];
    contents?: { uri: string; text?: string }[];
  };
  return [...(r.messages ?? []).map((m) => m.content.text), ...(r.contents ?? []).map((c) => c.text)].join(
    '\n',
  );
}

/** One raw 2026 `tools/call` (JSON-RPC body and answer as sent), for what the SDK client won't send. */
async function rawCall(
  name: string,
  extra: Record<string, unknown>,
  capabilities: Record<string, unknown> = { elicitation: { form: {} } },
): Promise<{
  status: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
}> {
  const response = await fetch(proxyUrl, {
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
        arguments: {},
        ...extra,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'e2e-relay-raw', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': capabilities,
        },
      },
    }),
  });
  const text = await response.text();
  // JSON or one SSE event carrying the response.
  const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return { status: response.status, ...(JSON.parse(json) as object) };
}

describe('codecall serve --http relays a 2026 upstream to a 2026 client across nodes', () => {
  it(
    'relays input_required rounds (elicitation twice, with the upstream state), each retry on the other node',
    { timeout: 120_000 },
    async () => {
      const answers: string[] = [];
      const client = await connect({ elicitation: { form: {} } }, answers);
      try {
        const before = [...hits];
        const calls = upstreamCalls.length;
        const result = await client.callTool({
          name: 'test_input_required_result_multi_round',
          arguments: {},
        });
        expect(resultText(result)).toBe('Both steps answered: the multi-round request is complete.');
        expect(answers).toEqual(['Step 1: What is your name?', 'Step 2: What is your favorite color?']);
        // Three tools/call requests (round 1, retry, retry): both nodes answered some of them.
        expect(hits[0]! - before[0]!).toBeGreaterThan(0);
        expect(hits[1]! - before[1]!).toBeGreaterThan(0);
        // The retries reached the upstream with its own requestState.
        expect(upstreamCalls.slice(calls).map((c) => c.requestState)).toEqual([false, true, true]);
      } finally {
        await client.close();
      }
    },
  );

  it(
    'relays sampling and roots rounds, and tells the upstream the client capabilities, not its own',
    { timeout: 60_000 },
    async () => {
      const client = await connect({ sampling: {}, roots: {} }, []);
      try {
        const calls = upstreamCalls.length;
        const sampled = await client.callTool({ name: 'test_input_required_result_sampling', arguments: {} });
        expect(resultText(sampled)).toBe('The model answered: Paris');
        const roots = await client.callTool({ name: 'test_input_required_result_list_roots', arguments: {} });
        expect(resultText(roots)).toBe('The client has 1 roots: file:///work/e2e');
        const asked = await client.callTool({
          name: 'test_input_required_result_capabilities',
          arguments: {},
        });
        expect(resultText(asked)).toBe('Asked only for what the client declared: sampling, roots.');
        expect(upstreamCalls[calls]!.capabilities).toEqual({ sampling: {}, roots: {} });
      } finally {
        await client.close();
      }
    },
  );

  it(
    'refuses a tampered requestState, another call’s state and an answer that is not an object',
    { timeout: 60_000 },
    async () => {
      const first = await rawCall('test_input_required_result_request_state', {});
      expect(first.result?.resultType).toBe('input_required');
      const state = first.result?.requestState as string;
      const answer = { confirm: { action: 'accept', content: { ok: true } } };
      const good = await rawCall('test_input_required_result_request_state', {
        inputResponses: answer,
        requestState: state,
      });
      expect(resultText(good.result)).toContain('state-ok');
      const tampered = await rawCall('test_input_required_result_request_state', {
        inputResponses: answer,
        requestState: `${state.slice(0, -2)}xx`,
      });
      expect(tampered.error?.code).toBe(-32602);
      const foreign = await rawCall('test_input_required_result_tampered_state', {
        inputResponses: answer,
        requestState: state,
      });
      expect(foreign.error).toMatchObject({
        code: -32602,
        message: expect.stringContaining('requestState belongs to another request'),
      });
      const malformed = await rawCall('test_input_required_result_elicitation', {
        inputResponses: { user_name: 12345 },
      });
      expect(malformed.error).toMatchObject({
        code: -32602,
        message: expect.stringContaining('inputResponses["user_name"]'),
      });
    },
  );

  it(
    'passes the upstream JSON-RPC error through (-32021, HTTP 400, its data)',
    { timeout: 60_000 },
    async () => {
      const missing = await rawCall('test_missing_capability', {}, { elicitation: { form: {} } });
      expect(missing.status).toBe(400);
      expect(missing.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
      const declared = await rawCall('test_missing_capability', {}, { sampling: {} });
      expect(resultText(declared.result)).toBe('The client declared sampling.');
    },
  );

  it(
    'forwards the progress of a pass-through call under the client’s token',
    { timeout: 60_000 },
    async () => {
      const client = await connect({}, []);
      try {
        const progress: number[] = [];
        const result = await client.callTool(
          { name: 'test_tool_with_progress', arguments: {} },
          { onprogress: (p) => progress.push(p.progress) },
        );
        expect(result.isError).not.toBe(true);
        expect(progress).toEqual([0, 50, 100]);
      } finally {
        await client.close();
      }
    },
  );
  it(
    'relays input_required on prompts/get and resources/read, each retry on the other node',
    { timeout: 120_000 },
    async () => {
      const answers: string[] = [];
      const client = await connect({ elicitation: { form: {} } }, answers);
      try {
        // Both fixtures offer prompts; with serve.originalNames each keeps its name (no other has it).
        const prompts = await client.listPrompts();
        expect(prompts.prompts.map((p) => p.name)).toEqual(
          expect.arrayContaining(['test_simple_prompt', 'test_input_required_result_prompt']),
        );
        const before = [...hits];
        const reads = upstreamReads.length;
        const prompt = await client.getPrompt({ name: 'test_input_required_result_prompt' });
        expect(textsOf(prompt)).toBe('Context: {"name":"Ada","color":"teal"}');
        expect(answers).toEqual(['What context should the prompt use?']);
        expect(hits[0]! - before[0]!).toBeGreaterThan(0);
        expect(hits[1]! - before[1]!).toBeGreaterThan(0);
        // The retry reached the upstream with its own state and the client's answer, not codecall's state.
        expect(upstreamReads.slice(reads)).toEqual([
          { method: 'prompts/get', requestState: false, inputResponses: undefined },
          {
            method: 'prompts/get',
            requestState: true,
            inputResponses: { context: { action: 'accept', content: { name: 'Ada', color: 'teal' } } },
          },
        ]);
        // Two servers offer resources: the 2026 fixture's URI is namespaced, and maps back.
        const uri = 'fixture2026+test://input-required-resource';
        const read = await client.readResource({ uri });
        expect(read.contents).toEqual([{ uri, text: 'read after confirmation (accept)' }]);
        expect(answers).toEqual(['What context should the prompt use?', 'Read the resource?']);
        expect(upstreamReads.slice(reads + 2).map((r) => [r.method, r.requestState])).toEqual([
          ['resources/read', false],
          ['resources/read', true],
        ]);
      } finally {
        await client.close();
      }
    },
  );

  it(
    'refuses a tampered state, and a state minted for another request, on prompts/get and resources/read',
    { timeout: 60_000 },
    async () => {
      const prompt = { name: 'test_input_required_result_prompt' };
      const first = await rawRequest('prompts/get', prompt, prompt.name);
      expect(first.result?.resultType).toBe('input_required');
      const state = first.result?.requestState as string;
      const answer = { context: { action: 'accept', content: { context: 'raw' } } };
      const good = await rawRequest(
        'prompts/get',
        { ...prompt, inputResponses: answer, requestState: state },
        prompt.name,
      );
      expect(textsOf(good.result)).toBe('Context: {"context":"raw"}');
      const tampered = await rawRequest(
        'prompts/get',
        { ...prompt, inputResponses: answer, requestState: `${state.slice(0, -2)}xx` },
        prompt.name,
      );
      expect(tampered.error?.code).toBe(-32602);
      // A state is bound to its method (the codec), and names its prompt: another prompt's retry is refused.
      const other = await rawRequest(
        'prompts/get',
        { name: 'test_simple_prompt', inputResponses: answer, requestState: state },
        'test_simple_prompt',
      );
      expect(other.error).toMatchObject({
        code: -32602,
        message: expect.stringContaining('requestState belongs to another request'),
      });
      const uri = 'fixture2026+test://input-required-resource';
      const onRead = await rawRequest(
        'resources/read',
        { uri, inputResponses: answer, requestState: state },
        uri,
      );
      expect(onRead.error?.code).toBe(-32602);
      const onCall = await rawCall('test_input_required_result_request_state', {
        inputResponses: answer,
        requestState: state,
      });
      expect(onCall.error).toMatchObject({ code: -32602 });
      const call = await rawCall('test_input_required_result_request_state', {});
      const callState = call.result?.requestState as string;
      const onPrompt = await rawRequest(
        'prompts/get',
        { ...prompt, inputResponses: answer, requestState: callState },
        prompt.name,
      );
      expect(onPrompt.error?.code).toBe(-32602);
    },
  );

  it(
    'sends list changes on subscriptions/listen, filtered as the client asked, and stops when it closes',
    { timeout: 120_000 },
    async () => {
      // One node: its pool is the one that sees its upstream's change (every node has its own).
      const client = await connect({}, [], nodeUrl);
      const narrow = await connect({}, [], nodeUrl);
      try {
        const seen: string[] = [];
        const narrowSeen: string[] = [];
        client.setNotificationHandler('notifications/tools/list_changed', () => void seen.push('tools'));
        client.setNotificationHandler('notifications/prompts/list_changed', () => void seen.push('prompts'));
        narrow.setNotificationHandler(
          'notifications/tools/list_changed',
          () => void narrowSeen.push('tools'),
        );
        narrow.setNotificationHandler(
          'notifications/prompts/list_changed',
          () => void narrowSeen.push('prompts'),
        );
        const subscription = await client.listen({ toolsListChanged: true, promptsListChanged: true });
        expect(subscription.honoredFilter).toEqual({ toolsListChanged: true, promptsListChanged: true });
        const promptsOnly = await narrow.listen({ promptsListChanged: true });
        const listed = async (): Promise<string[]> => (await client.listTools()).tools.map((t) => t.name);
        const had = (await listed()).includes('test_dynamic_tool');
        await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
        await vi.waitFor(() => expect(seen).toContain('tools'), { timeout: 30_000, interval: 100 });
        expect((await listed()).includes('test_dynamic_tool')).toBe(!had);
        await client.callTool({ name: 'test_trigger_prompt_change', arguments: {} });
        await vi.waitFor(() => expect(seen).toContain('prompts'), { timeout: 30_000, interval: 100 });
        await vi.waitFor(() => expect(narrowSeen).toContain('prompts'), { timeout: 30_000, interval: 100 });
        // The prompts-only stream never got the tool change.
        expect(narrowSeen).not.toContain('tools');
        await subscription.close();
        expect(await subscription.closed).toBe('local');
        const count = seen.length;
        await client.callTool({ name: 'test_trigger_prompt_change', arguments: {} });
        // The other stream still hears it; the closed one does not.
        await vi.waitFor(() => expect(narrowSeen.filter((n) => n === 'prompts').length).toBe(2), {
          timeout: 30_000,
          interval: 100,
        });
        expect(seen.length).toBe(count);
        await promptsOnly.close();
      } finally {
        await client.close();
        await narrow.close();
      }
    },
  );
});
