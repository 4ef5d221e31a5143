/**
 * A script's upstream input requests reach the 2026-07-28 client that started the run (issue 28):
 * `codecall serve --http` runs `execute_code` for the official SDK v2 client pinned to 2026-07-28;
 * the script calls a real SDK v2 upstream that answers `input_required` (one round, two rounds,
 * and a question that changes on replay) and a real SDK 1.x upstream that elicits during its call.
 * Each request pauses the run and reaches the client as `input_required`; the client's retry is
 * resumed by replay of the run's journal, the upstream asked again and answered from the client's
 * responses. The upstreams count what really ran. Then two serve nodes behind a round-robin proxy
 * (shared key, Redis journals): the rounds land on both nodes.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  acceptedContent,
  createMcpHandler,
  inputRequired,
  McpServer as ModernMcpServer,
  type CallToolResult,
  type InputRequiredResult,
} from '@modelcontextprotocol/server';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import { serveHttp, type HttpMcpEndpoint } from '../../src/testing/servers/index.js';
import { hasRedisServer, startRedis, type RedisHandle } from '../integration/jobs/jobs-helpers.js';
import { resultText, roundRobin, startServe2026 } from './mcp-2026-helpers.js';
import type { ServeProcess } from './serve-helpers.js';

const serves: ServeProcess[] = [];
const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const serve of serves) serve.child.kill('SIGTERM');
  await Promise.all(serves.map((serve) => serve.exited));
  for (const close of closers.reverse()) await close();
});

/** What the upstreams really did. */
interface Upstreams {
  modernUrl: string;
  legacyUrl: string;
  /** Completed effects, e.g. `deploy:staging`. */
  done: string[];
  /** `tools/call` requests that reached the 2026 upstream, by tool. */
  calls: Map<string, number>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const confirmSchema = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const } },
  required: ['confirm'],
};

/** A 2026-only SDK v2 upstream (`deploy`, `two_step`, `fickle`) and an SDK 1.x one (`wipe`, which elicits). */
async function startUpstreams(): Promise<Upstreams> {
  const done: string[] = [];
  const calls = new Map<string, number>();
  let fickleAsked = 0;
  const handler = createMcpHandler(
    () => {
      const server = new ModernMcpServer({ name: 'modern-up', version: '1.0.0' });
      server.registerTool(
        'deploy',
        { description: 'Deploys after the operator confirms.', inputSchema: z.object({ env: z.string() }) },
        async ({ env }, ctx): Promise<CallToolResult | InputRequiredResult> => {
          const answer = acceptedContent(
            ctx.mcpReq.inputResponses,
            'confirm',
            z.object({ confirm: z.boolean() }),
          );
          if (answer === undefined)
            return inputRequired({
              inputRequests: {
                confirm: inputRequired.elicit({
                  message: `Deploy to ${env}?`,
                  requestedSchema: confirmSchema,
                }),
              },
              requestState: `deploy:${env}`,
            });
          if (answer.confirm) done.push(`deploy:${env}`);
          return { content: [{ type: 'text', text: answer.confirm ? `deployed ${env}` : `kept ${env}` }] };
        },
      );
      server.registerTool(
        'two_step',
        { description: 'Asks a name, then a confirmation.', inputSchema: z.object({}) },
        async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
          const state = ctx.mcpReq.requestState<string>();
          const name = acceptedContent(ctx.mcpReq.inputResponses, 'name', z.object({ name: z.string() }));
          if (state === undefined || (state === 'step1' && name === undefined))
            return inputRequired({
              inputRequests: {
                name: inputRequired.elicit({
                  message: 'Which name?',
                  requestedSchema: {
                    type: 'object',
                    properties: { name: { type: 'string' } },
                    required: ['name'],
                  },
                }),
              },
              requestState: 'step1',
            });
          if (state === 'step1')
            return inputRequired({
              inputRequests: {
                confirm: inputRequired.elicit({
                  message: `Really name it ${name!.name}?`,
                  requestedSchema: confirmSchema,
                }),
              },
              requestState: `step2:${name!.name}`,
            });
          const confirmed = acceptedContent(
            ctx.mcpReq.inputResponses,
            'confirm',
            z.object({ confirm: z.boolean() }),
          );
          const chosen = state.slice('step2:'.length);
          if (confirmed?.confirm === true) done.push(`name:${chosen}`);
          return {
            content: [{ type: 'text', text: confirmed?.confirm === true ? `named ${chosen}` : 'not named' }],
          };
        },
      );
      server.registerTool(
        'fickle',
        { description: 'Asks one question the first time, another one after.', inputSchema: z.object({}) },
        async (_args, ctx): Promise<CallToolResult | InputRequiredResult> => {
          const answer = acceptedContent(ctx.mcpReq.inputResponses, 'q', z.object({ answer: z.string() }));
          if (answer === undefined) {
            fickleAsked++;
            const question = fickleAsked === 1 ? 'First question?' : 'Second question?';
            return inputRequired({
              inputRequests: {
                q: inputRequired.elicit({
                  message: question,
                  requestedSchema: {
                    type: 'object',
                    properties: { answer: { type: 'string' } },
                    required: ['answer'],
                  },
                }),
              },
              requestState: question,
            });
          }
          done.push(`fickle:${String(ctx.mcpReq.requestState<string>())}=${answer.answer}`);
          return {
            content: [
              { type: 'text', text: `${String(ctx.mcpReq.requestState<string>())} ${answer.answer}` },
            ],
          };
        },
      );
      return server;
    },
    { legacy: 'reject' },
  );
  const http: Server = createServer((request, response) => {
    void (async () => {
      const text = await readBody(request);
      try {
        const message = JSON.parse(text) as { method?: string; params?: { name?: string } };
        if (message.method === 'tools/call' && message.params?.name)
          calls.set(message.params.name, (calls.get(message.params.name) ?? 0) + 1);
      } catch {
        // Not JSON: the handler answers it.
      }
      const headers = new Headers();
      for (const [key, value] of Object.entries(request.headers))
        if (typeof value === 'string') headers.set(key, value);
      const answer = await handler.fetch(
        new Request(`http://127.0.0.1${request.url ?? '/'}`, {
          method: request.method ?? 'GET',
          headers,
          ...(request.method === 'GET' || request.method === 'HEAD' ? {} : { body: text }),
        }),
      );
      response.writeHead(answer.status, Object.fromEntries(answer.headers));
      response.end(Buffer.from(await answer.arrayBuffer()));
    })().catch((error: unknown) => {
      response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    await handler.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  const legacy: HttpMcpEndpoint = await serveHttp(() => {
    const server = new McpServer({ name: 'legacy-up', version: '1.0.0' });
    server.registerTool(
      'wipe',
      { description: 'Wipes a table after asking.', inputSchema: { table: z.string() } },
      async ({ table }) => {
        const answer = await server.server.elicitInput({
          message: `Wipe ${table}?`,
          requestedSchema: confirmSchema,
        });
        const yes = answer.action === 'accept' && answer.content?.confirm === true;
        if (yes) done.push(`wipe:${table}`);
        return { content: [{ type: 'text', text: yes ? `wiped ${table}` : `kept ${table}` }] };
      },
    );
    return server;
  });
  closers.push(() => legacy.close());
  return {
    modernUrl: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    legacyUrl: legacy.url,
    done,
    calls,
  };
}

function writeConfig(upstreams: Upstreams, extra: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-upstream-input-'));
  closers.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'codecall.json');
  writeFileSync(
    path,
    JSON.stringify({
      mcpServers: {
        modern: {
          type: 'http',
          url: upstreams.modernUrl,
          protocol: '2026-07-28',
          allowedCallers: ['code_execution'],
          tools: { deploy: { requireApproval: true } },
        },
        legacy: { type: 'http', url: upstreams.legacyUrl, allowedCallers: ['code_execution'] },
      },
      sandbox: { mode: 'in-process', cpuTimeMs: 5_000, memoryMb: 64 },
      history: { enabled: false },
      ...extra,
    }),
  );
  return path;
}

/**
 * The SDK v2 client pinned to 2026-07-28; its elicitation handler answers each form from
 * `answer` (by message) and logs every message to `asked`. Without `elicitation`, it declares none.
 */
async function connect(
  url: string,
  asked: string[],
  options: { elicitation?: boolean } = {},
): Promise<Client> {
  const client = new Client(
    { name: 'e2e-2026-upstream-input', version: '1.0.0' },
    {
      capabilities: options.elicitation === false ? {} : { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      inputRequired: { maxRounds: 20 },
    },
  );
  if (options.elicitation !== false)
    client.setRequestHandler('elicitation/create', (request) => {
      const message = request.params.message;
      asked.push(message);
      if (message.startsWith('Approve ')) return { action: 'accept', content: { approve: true } };
      if (message === 'Which name?') return { action: 'accept', content: { name: 'orion' } };
      if (message.endsWith('question?')) return { action: 'accept', content: { answer: `re: ${message}` } };
      if (message.startsWith('Wipe t2')) return { action: 'decline' };
      return { action: 'accept', content: { confirm: true } };
    });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  closers.push(() => client.close());
  return client;
}

/** Deploys (approval, then a 2026 input round), wipes two tables (2025 elicitation: yes, then declined). */
const script = `
  const deployed = await tools.modern.deploy({ env: 'staging' });
  const wiped = await tools.legacy.wipe({ table: 't1' });
  const kept = await tools.legacy.wipe({ table: 't2' });
  console.log(JSON.stringify([deployed, wiped, kept]));`;

describe('a script’s upstream input requests reach the 2026-07-28 client that started the run', () => {
  it('passes 2026 input_required rounds and 2025 elicitations to the client, beside an approval, answered by replay', async () => {
    const upstreams = await startUpstreams();
    const { url } = await startServe2026(serves, writeConfig(upstreams));
    const asked: string[] = [];
    const client = await connect(url, asked);

    const result = await client.callTool({ name: 'execute_code', arguments: { code: script } });
    expect(resultText(result)).toMatch(/^stdout:\n\["deployed staging","wiped t1","kept t2"\]\n/);
    expect(asked.map((message) => message.replace(/^(Approve \S+).*$/s, '$1'))).toEqual([
      'Approve modern.deploy({"env":"staging"})',
      'Deploy to staging?',
      'Wipe t1?',
      'Wipe t2?',
    ]);
    // Each effect happened once, though the run was replayed after every round.
    expect(upstreams.done).toEqual(['deploy:staging', 'wipe:t1']);

    // Two rounds in one upstream call, and a question that changes on replay: the answer given is
    // the one to the question the upstream asks now, never the earlier one's.
    asked.length = 0;
    const multi = await client.callTool({
      name: 'execute_code',
      arguments: {
        code: 'console.log(await tools.modern.two_step({})); console.log(await tools.modern.fickle({}));',
      },
    });
    expect(resultText(multi)).toMatch(/^stdout:\nnamed orion\nSecond question\? re: Second question\?\n/);
    expect(asked).toEqual(['Which name?', 'Really name it orion?', 'First question?', 'Second question?']);
    expect(upstreams.done.slice(2)).toEqual(['name:orion', 'fickle:Second question?=re: Second question?']);
  }, 180_000);

  it('gives a client without the elicitation capability a tool error naming it, and nothing hangs', async () => {
    const upstreams = await startUpstreams();
    const { url } = await startServe2026(serves, writeConfig(upstreams));
    const client = await connect(url, [], { elicitation: false });
    const result = await client.callTool({
      name: 'execute_code',
      arguments: {
        code: `try { await tools.legacy.wipe({ table: 't9' }); } catch (error) { console.log('wipe:', error.message); }
               try { await tools.modern.two_step({}); } catch (error) { console.log('two_step:', error.message); }`,
      },
    });
    const text = resultText(result);
    expect(text).toMatch(/wipe: .*did not declare the "elicitation" capability/);
    expect(text).toMatch(/two_step: .*did not declare the "elicitation" capability/);
    expect(upstreams.done).toEqual([]);
  }, 120_000);

  it.skipIf(!hasRedisServer() && process.env.CI !== 'true')(
    'two nodes behind a round-robin proxy: the rounds of one run land on both (shared key, Redis journals)',
    async () => {
      const upstreams = await startUpstreams();
      const redis: RedisHandle = await startRedis();
      closers.push(() => redis.stop());
      const config = writeConfig(upstreams);
      const env = { CODECALL_REQUEST_STATE_KEY: randomBytes(32).toString('hex') };
      const [a, b] = await Promise.all([
        startServe2026(serves, config, ['--redis', redis.url], env),
        startServe2026(serves, config, ['--redis', redis.url], env),
      ]);
      const proxy = await roundRobin([a.url, b.url]);
      closers.push(() => void proxy.server.close());
      const asked: string[] = [];
      const client = await connect(proxy.url, asked);
      const before = [...proxy.hits];
      const result = await client.callTool({ name: 'execute_code', arguments: { code: script } });
      expect(resultText(result)).toMatch(/^stdout:\n\["deployed staging","wiped t1","kept t2"\]\n/);
      expect(asked).toHaveLength(4);
      // Five requests (four rounds and the last retry), alternating between the nodes.
      expect(proxy.hits.map((n, i) => n - before[i]!).sort()).toEqual([2, 3]);
      expect(upstreams.done).toEqual(['deploy:staging', 'wipe:t1']);
    },
    240_000,
  );
});
