/**
 * The real `codecall serve --http` in front of one stdio MCP server that logs its callers'
 * arguments, with two SDK clients that both asked for logs: a log line of client A's call
 * reaches A and never B (issue 34). The in-process cases (scripts, calls of two clients in
 * flight, elicitation, the bounded queue, cancelled streams) are in
 * test/integration/server/upstream-notifications.test.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, spawnServe, type ServeProcess } from './serve-helpers.js';

const SDK = join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');

/**
 * `charge({ card })` logs the card it charges; `announce()` sends `prompts/list_changed`, which
 * codecall tells every session on its standalone stream (the test's ordering barrier).
 */
const VAULT_SERVER = `
import { Server } from ${JSON.stringify(pathToFileURL(join(SDK, 'server', 'index.js')).href)};
import { StdioServerTransport } from ${JSON.stringify(pathToFileURL(join(SDK, 'server', 'stdio.js')).href)};
import {
  CallToolRequestSchema,
  ListPromptsRequestSchema,
  ListToolsRequestSchema,
} from ${JSON.stringify(pathToFileURL(join(SDK, 'types.js')).href)};
const server = new Server(
  { name: 'vault', version: '1.0.0' },
  { capabilities: { tools: {}, logging: {}, prompts: { listChanged: true } } },
);
const object = { type: 'object', properties: { card: { type: 'string' } } };
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    { name: 'charge', description: 'Charges a card.', inputSchema: object },
    { name: 'announce', description: 'Says the prompts changed.', inputSchema: { type: 'object' } },
  ],
}));
server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [] }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  if (request.params.name === 'announce') await server.sendPromptListChanged();
  else
    await server.notification({
      method: 'notifications/message',
      params: { level: 'info', data: 'charging card ' + request.params.arguments.card },
    });
  return { content: [{ type: 'text', text: 'done' }] };
});
process.stdin.on('end', () => process.exit(0));
await server.connect(new StdioServerTransport());
`;

const dir = mkdtempSync(join(tmpdir(), 'codecall-serve-logs-'));
let serve: ServeProcess;
let url: string;
const clients: Client[] = [];

beforeAll(async () => {
  const script = join(dir, 'vault.mjs');
  writeFileSync(script, VAULT_SERVER);
  const configPath = join(dir, 'codecall.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        vault: {
          command: process.execPath,
          args: [script],
          deferLoading: false,
          allowedCallers: ['direct', 'code_execution'],
        },
      },
      history: { enabled: false },
      serve: { waitForServersMs: 60_000 },
    }),
  );
  serve = spawnServe(['--http', '--port', '0', '--config', configPath], { cwd: dir });
  [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
});

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  if (serve && serve.child.exitCode === null) {
    serve.child.kill('SIGTERM');
    await serve.exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

interface Session {
  client: Client;
  logs: string[];
  /** `prompts/list_changed` notifications received. */
  announced: number;
}

async function connect(): Promise<Session> {
  const client = new Client({ name: 'e2e-logs', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  clients.push(client);
  const session: Session = { client, logs: [], announced: 0 };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    session.logs.push(String(n.params.data));
  });
  client.setNotificationHandler(PromptListChangedNotificationSchema, () => {
    session.announced++;
  });
  await client.setLoggingLevel('debug');
  return session;
}

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

describe('codecall serve --http with two clients of one upstream server', () => {
  it("sends a log line of A's call, with A's arguments, to A and not to B", async () => {
    const a = await connect();
    const b = await connect();
    const announce = async (): Promise<void> => {
      expect(text(await a.client.callTool({ name: 'vault__announce', arguments: {} }))).toBe('done');
    };
    // B's standalone stream is open once it hears an announcement (it opens after initialization).
    await expect
      .poll(
        async () => {
          await announce();
          return b.announced;
        },
        { timeout: 20_000 },
      )
      .toBeGreaterThan(0);
    const heard = b.announced;
    const result = await a.client.callTool({
      name: 'vault__charge',
      arguments: { card: '4111 1111 1111 1111' },
    });
    expect(text(result)).toBe('done');
    await expect.poll(() => a.logs).toEqual(['charging card 4111 1111 1111 1111']);
    // One stream, in order: what B was sent before this announcement has arrived once it has.
    await announce();
    await expect.poll(() => b.announced, { timeout: 20_000 }).toBeGreaterThan(heard);
    expect(b.logs).toEqual([]);
  });
});
