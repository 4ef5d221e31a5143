/**
 * `createCodecallServer` as a gateway: what upstream servers offer besides tools passes through
 * with namespaced names and URIs. Real parts: two conformance fixture servers upstream (over the
 * SDK's linked in-memory transports), a real runtime, and SDK clients, one declaring sampling and
 * elicitation and one declaring neither.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  type CallToolResult,
  type LoggingMessageNotification,
  type Resource,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createCodecallServer, type CodecallServerOptions } from '../../../src/server/index.js';
import {
  CONFORMANCE_PNG_BASE64,
  createConformanceServer,
  inMemoryTransport,
} from '../../../src/testing/servers/index.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-gateway-'));
const runtimes: CodecallRuntime[] = [];
const clients: Client[] = [];

afterAll(async () => {
  for (const client of clients) await client.close();
  for (const runtime of runtimes) await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A runtime over conformance fixture servers named `names`, each listing 2 resources a page. */
async function openRuntime(names: string[], serverConfig: object = {}): Promise<CodecallRuntime> {
  const configPath = join(dir, `${names.join('-')}.json`);
  const mcpServers = Object.fromEntries(
    names.map((name) => [name, { command: 'unused', deferLoading: false, ...serverConfig }]),
  );
  writeFileSync(configPath, JSON.stringify({ mcpServers, history: { enabled: false } }));
  const runtime = await CodecallRuntime.open({
    load: { path: configPath },
    history: false,
    tools: {
      transports: Object.fromEntries(
        names.map((name) => [
          name,
          inMemoryTransport(() => createConformanceServer({ resourcePageSize: 2 })),
        ]),
      ),
    },
  });
  runtimes.push(runtime);
  return runtime;
}

async function connect(
  runtime: CodecallRuntime,
  options: Partial<CodecallServerOptions> = {},
  capabilities: Record<string, object> = {},
): Promise<Client> {
  const server = createCodecallServer({ runtime, ...options });
  const client = new Client({ name: 'gateway-test', version: '1.0.0' }, { capabilities });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  clients.push(client);
  return client;
}

/** Every item of a paginated listing (at most 10 pages). */
async function all<T>(
  list: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor?: string | undefined }>,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 10; page++) {
    const result = await list(cursor);
    items.push(...result.items);
    cursor = result.nextCursor;
    if (cursor === undefined) break;
  }
  return items;
}

function text(result: unknown): string {
  return (result as CallToolResult).content
    .map((c) => (c.type === 'text' ? c.text : `[${c.type}]`))
    .join('\n');
}

describe('a gateway in front of two servers', () => {
  let runtime: CodecallRuntime;
  let client: Client;
  beforeAll(async () => {
    runtime = await openRuntime(['alpha', 'beta_srv']);
    client = await connect(runtime, {}, { sampling: {}, elicitation: {} });
  });

  it('declares what the upstream servers offer', () => {
    expect(client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      resources: { subscribe: true, listChanged: true },
      prompts: { listChanged: true },
      completions: {},
      logging: {},
    });
  });

  it('lists resources page by page across servers, with <scheme>+<uri> names', async () => {
    const pages: Resource[][] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listResources(cursor === undefined ? {} : { cursor });
      pages.push(page.resources);
      cursor = page.nextCursor;
    } while (cursor !== undefined && pages.length < 10);
    expect(pages.map((page) => page.map((r) => r.uri))).toEqual([
      ['alpha+test://static-text', 'alpha+test://static-binary'],
      ['alpha+test://watched-resource'],
      ['beta-srv+test://static-text', 'beta-srv+test://static-binary'],
      ['beta-srv+test://watched-resource'],
    ]);
    await expect(client.listResources({ cursor: 'not-a-cursor' })).rejects.toThrow(/Invalid cursor/);
  });

  it('reads resources and templates through their namespaced URIs', async () => {
    const binary = await client.readResource({ uri: 'beta-srv+test://static-binary' });
    expect(binary.contents).toEqual([
      { uri: 'beta-srv+test://static-binary', mimeType: 'image/png', blob: CONFORMANCE_PNG_BASE64 },
    ]);
    const templates = await all(async (cursor) => {
      const page = await client.listResourceTemplates(cursor === undefined ? {} : { cursor });
      return { items: page.resourceTemplates, nextCursor: page.nextCursor };
    });
    expect(templates.map((t) => t.uriTemplate)).toEqual([
      'alpha+test://template/{id}/data',
      'beta-srv+test://template/{id}/data',
    ]);
    const templated = await client.readResource({ uri: 'alpha+test://template/42/data' });
    expect(JSON.parse((templated.contents[0] as { text: string }).text)).toEqual({
      id: '42',
      templateTest: true,
      data: 'Data for ID: 42',
    });
    // The upstream's own error code and message, said once.
    await expect(client.readResource({ uri: 'alpha+test://nothing' })).rejects.toThrow(
      /^MCP error -32002: Resource not found: test:\/\/nothing$/,
    );
    await expect(client.readResource({ uri: 'test://static-text' })).rejects.toThrow(
      /URIs of this gateway are "<server>\+<uri>"/,
    );
  });

  it('forwards resources/updated to the subscribed session only, under its URI, until it unsubscribes', async () => {
    const other = await connect(runtime);
    const updates: string[] = [];
    const otherUpdates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
    other.setNotificationHandler(
      ResourceUpdatedNotificationSchema,
      (n) => void otherUpdates.push(n.params.uri),
    );
    await client.subscribeResource({ uri: 'beta-srv+test://watched-resource' });
    const touched = await client.callTool({ name: 'beta_srv__touch_watched_resource', arguments: {} });
    expect(text(touched)).toBe('notified');
    await expect.poll(() => updates).toEqual(['beta-srv+test://watched-resource']);
    expect(otherUpdates).toEqual([]);
    // Two sessions subscribed: one leaving keeps the upstream subscription for the other.
    await other.subscribeResource({ uri: 'beta-srv+test://watched-resource' });
    await client.unsubscribeResource({ uri: 'beta-srv+test://watched-resource' });
    expect(text(await other.callTool({ name: 'beta_srv__touch_watched_resource', arguments: {} }))).toBe(
      'notified',
    );
    await expect.poll(() => otherUpdates).toEqual(['beta-srv+test://watched-resource']);
    await other.unsubscribeResource({ uri: 'beta-srv+test://watched-resource' });
    // The last subscriber gone, the gateway unsubscribed upstream too.
    expect(text(await client.callTool({ name: 'beta_srv__touch_watched_resource', arguments: {} }))).toBe(
      'nobody subscribed',
    );
    expect(updates).toHaveLength(1);
  });

  it('bounds the subscriptions of one session (maxSubscriptions), and says how to go on', async () => {
    const bounded = await connect(runtime, { maxSubscriptions: 2 });
    await bounded.subscribeResource({ uri: 'alpha+test://static-text' });
    await bounded.subscribeResource({ uri: 'alpha+test://static-binary' });
    await bounded.subscribeResource({ uri: 'alpha+test://static-text' }); // held already: no new one
    await expect(bounded.subscribeResource({ uri: 'beta-srv+test://static-text' })).rejects.toThrow(
      /holds 2 resource subscriptions, the most codecall serve allows \(serve\.maxSubscriptionsPerSession\); unsubscribe from one first/,
    );
    await bounded.unsubscribeResource({ uri: 'alpha+test://static-binary' });
    await bounded.subscribeResource({ uri: 'beta-srv+test://static-text' });
  });

  it('lists and gets prompts as <namespace>__<prompt>, and completes their arguments', async () => {
    const first = await client.listPrompts();
    expect(first.prompts.map((p) => p.name)).toEqual([
      'alpha__test_simple_prompt',
      'alpha__test_prompt_with_arguments',
      'alpha__test_prompt_with_embedded_resource',
      'alpha__test_prompt_with_image',
    ]);
    const prompts = await all(async (cursor) => {
      const page = await client.listPrompts(cursor === undefined ? {} : { cursor });
      return { items: page.prompts, nextCursor: page.nextCursor };
    });
    expect(prompts.map((p) => p.name)).toHaveLength(8);
    expect(prompts.map((p) => p.name)).toContain('beta_srv__test_prompt_with_arguments');
    const prompt = await client.getPrompt({
      name: 'beta_srv__test_prompt_with_arguments',
      arguments: { arg1: 'hello', arg2: 'world' },
    });
    expect(prompt.messages).toEqual([
      { role: 'user', content: { type: 'text', text: "Prompt with arguments: arg1='hello', arg2='world'" } },
    ]);
    const completion = await client.complete({
      ref: { type: 'ref/prompt', name: 'alpha__test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'par' },
    });
    expect(completion.completion.values).toEqual(['paris', 'park', 'party']);
    await expect(client.getPrompt({ name: 'test_simple_prompt' })).rejects.toThrow(
      /Prompts of this gateway are "<server>__<prompt>"/,
    );
  });

  it('forwards log messages at or above the level the session set, named by server', async () => {
    const logs: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    await client.callTool({ name: 'alpha__test_tool_with_logging', arguments: {} });
    expect(logs).toEqual([]); // no level set: this session did not ask for logs
    // Another session asks for warnings and above; then this one for info (the upstream's level now).
    const quiet = await connect(runtime);
    const quietLogs: unknown[] = [];
    quiet.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void quietLogs.push(n.params));
    await quiet.setLoggingLevel('warning');
    await client.setLoggingLevel('info');
    await client.callTool({ name: 'alpha__test_tool_with_logging', arguments: {} });
    await expect.poll(() => logs.length).toBe(3);
    await quiet.ping();
    expect(quietLogs).toEqual([]);
    expect(logs.map((l) => [l.level, l.logger, l.data])).toEqual([
      ['info', 'alpha/conformance', 'Tool execution started'],
      ['info', 'alpha/conformance', 'Tool processing data'],
      ['info', 'alpha/conformance', 'Tool execution completed'],
    ]);
  });

  it("forwards the upstream's progress under the client's token", async () => {
    const seen: number[] = [];
    const result = await client.callTool(
      { name: 'alpha__test_tool_with_progress', arguments: {} },
      undefined,
      {
        onprogress: (progress) => void seen.push(progress.progress),
      },
    );
    expect(text(result)).toBe('Tool with progress executed successfully');
    expect(seen).toEqual([0, 50, 100]);
  });

  it('forwards sampling and elicitation to a client that declared them', async () => {
    client.setRequestHandler(CreateMessageRequestSchema, (request) => ({
      role: 'assistant',
      content: { type: 'text', text: `echo ${JSON.stringify(request.params.messages[0]?.content)}` },
      model: 'test-model',
    }));
    client.setRequestHandler(ElicitRequestSchema, () => ({
      action: 'accept',
      content: { username: 'ada', email: 'ada@example.com' },
    }));
    const sampled = await client.callTool({ name: 'alpha__test_sampling', arguments: { prompt: 'hi' } });
    expect(text(sampled)).toBe('LLM response: echo {"type":"text","text":"hi"}');
    const elicited = await client.callTool({
      name: 'beta_srv__test_elicitation',
      arguments: { message: 'who?' },
    });
    expect(text(elicited)).toBe(
      'User response: action=accept, content={"username":"ada","email":"ada@example.com"}',
    );
  });

  it('refuses sampling and elicitation clearly for a client that did not declare them', async () => {
    const plain = await connect(runtime);
    const sampled = await plain.callTool({ name: 'alpha__test_sampling', arguments: { prompt: 'hi' } });
    expect(sampled.isError).toBe(true);
    expect(text(sampled)).toMatch(/did not declare the "sampling" capability/);
    const elicited = await plain.callTool({
      name: 'alpha__test_elicitation',
      arguments: { message: 'who?' },
    });
    expect(text(elicited)).toMatch(/did not declare the "elicitation" capability/);
  });
});

describe('scripts read resources', () => {
  it('through tools.<server>.read_resource({ uri }), declared, found by search, code only', async () => {
    const runtime = await openRuntime(['docs']);
    const client = await connect(runtime);
    const run = await client.callTool({
      name: 'execute_code',
      arguments: {
        code:
          "const r = await tools.docs.read_resource({ uri: 'test://template/7/data' });\n" +
          'console.log(JSON.parse(r.contents[0].text).data, r.contents[0].mimeType);',
      },
    });
    expect(text(run)).toBe('stdout:\nData for ID: 7 application/json\n\nexit status: ok after 1 tool call');
    const missing = await client.callTool({
      name: 'execute_code',
      arguments: { code: "await tools.docs.read_resource({ uri: 'test://nothing' });" },
    });
    expect(text(missing)).toMatch(
      /docs\.read_resource failed: MCP error -32002: Resource not found: test:\/\/nothing/,
    );
    const found = await client.callTool({
      name: 'search_tools',
      arguments: { query: 'read resource by uri' },
    });
    expect(text(found)).toMatch(/docs\.read_resource/);
    expect(text(found)).toMatch(/read_resource\(args: \{[^}]*uri: string/);
    // MCP clients read through resources/read; the synthetic tool is not passed through.
    expect((await client.listTools()).tools.map((t) => t.name)).not.toContain('docs__read_resource');
  });

  it("under the server's caller policy", async () => {
    const runtime = await openRuntime(['closed'], { allowedCallers: ['direct'] });
    const client = await connect(runtime);
    const run = await client.callTool({
      name: 'execute_code',
      arguments: { code: "await tools.closed.read_resource({ uri: 'test://static-text' });" },
    });
    expect(run.isError).toBe(true);
    expect(text(run)).toMatch(
      /closed\.read_resource may not be called from code: mcpServers\.closed\.allowedCallers/,
    );
  });
});

describe('originalNames in front of one server', () => {
  it('keeps tool names, prompt names and URIs as the server gives them', async () => {
    const runtime = await openRuntime(['only']);
    const client = await connect(runtime, { originalNames: true });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('test_simple_text');
    expect(tools.map((t) => t.name)).not.toContain('only__test_simple_text');
    expect(text(await client.callTool({ name: 'test_simple_text', arguments: {} }))).toBe(
      'This is a simple text response for testing.',
    );
    const first = await client.listResources();
    expect(first.resources.map((r) => r.uri)).toEqual(['test://static-text', 'test://static-binary']);
    const read = await client.readResource({ uri: 'test://static-text' });
    expect(read.contents[0]?.uri).toBe('test://static-text');
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toContain('test_simple_prompt');
    const prompt = await client.getPrompt({ name: 'test_simple_prompt' });
    expect(prompt.messages[0]?.content).toEqual({
      type: 'text',
      text: 'This is a simple prompt for testing.',
    });
  });
});

describe('originalNames in front of two servers offering prompts', () => {
  it('keeps the name of a prompt no other server lists, and prefixes the names both list', async () => {
    const runtime = await openRuntime(['alpha', 'beta']);
    const client = await connect(runtime, { originalNames: true });
    // alpha alone lists test_dynamic_prompt once its hook added it.
    expect(text(await client.callTool({ name: 'alpha__test_trigger_prompt_change', arguments: {} }))).toBe(
      'test_dynamic_prompt added',
    );
    const names = (
      await all(async (cursor) => {
        const page = await client.listPrompts(cursor === undefined ? {} : { cursor });
        return { items: page.prompts, nextCursor: page.nextCursor };
      })
    ).map((p) => p.name);
    expect(names).toContain('test_dynamic_prompt');
    expect(names).not.toContain('alpha__test_dynamic_prompt');
    expect(names).toEqual(expect.arrayContaining(['alpha__test_simple_prompt', 'beta__test_simple_prompt']));
    expect(names).not.toContain('test_simple_prompt');
    const dynamic = await client.getPrompt({ name: 'test_dynamic_prompt' });
    expect(dynamic.messages[0]?.content).toEqual({ type: 'text', text: 'The dynamic prompt.' });
    const prefixed = await client.getPrompt({ name: 'beta__test_simple_prompt' });
    expect(prefixed.messages[0]?.content).toEqual({
      type: 'text',
      text: 'This is a simple prompt for testing.',
    });
    await expect(client.getPrompt({ name: 'test_simple_prompt' })).rejects.toThrow(
      /Unknown prompt "test_simple_prompt"\. Prompts of this gateway are "<server>__<prompt>".*own name when no other server/,
    );
  });
});
