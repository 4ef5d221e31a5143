/**
 * The upstreams of the tests of a script's upstream input requests (serve-mcp-2026-upstream-input,
 * serve-mcp-2026-task-input): a real SDK v2 server that answers `input_required` (one round, two
 * rounds, a question that changes on replay) and a real SDK 1.x server that elicits during its call,
 * both counting what really ran; and the serve configuration in front of them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  acceptedContent,
  createMcpHandler,
  inputRequired,
  McpServer as ModernMcpServer,
  type CallToolResult,
  type InputRequiredResult,
} from '@modelcontextprotocol/server';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import * as z from 'zod/v4';
import { serveHttp } from '../../src/testing/servers/index.js';
import { answerWithMcpHandler } from '../../src/testing/servers/mcp-handler-http.js';

/** What a test closes at its end, last pushed first. */
export type Closers = (() => Promise<void> | void)[];

/** What the upstreams really did. */
export interface InputUpstreams {
  modernUrl: string;
  legacyUrl: string;
  /** Completed effects, e.g. `deploy:staging`. */
  done: string[];
  /** `tools/call` requests that reached the 2026 upstream, by tool. */
  calls: Map<string, number>;
}

const confirmSchema = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const } },
  required: ['confirm'],
};

/**
 * A 2026-only SDK v2 upstream (`deploy`, `two_step`, `fickle`) on loopback HTTP and an SDK 1.x one
 * (`wipe`, which elicits); both are closed by what they push to `closers`.
 */
export async function startInputUpstreams(closers: Closers): Promise<InputUpstreams> {
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
        { description: 'Asks a name, then a confirmation, in one call.', inputSchema: z.object({}) },
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
          const asked = String(ctx.mcpReq.requestState<string>());
          done.push(`fickle:${asked}=${answer.answer}`);
          return { content: [{ type: 'text', text: `${asked} ${answer.answer}` }] };
        },
      );
      return server;
    },
    { legacy: 'reject' },
  );
  const http: Server = createServer((request, response) => {
    answerWithMcpHandler(handler, request, response, (message) => {
      const name = (message.params as { name?: unknown } | undefined)?.name;
      if (message.method === 'tools/call' && typeof name === 'string')
        calls.set(name, (calls.get(name) ?? 0) + 1);
    }).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    await handler.close();
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });
  const legacy = await serveHttp(() => {
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

/**
 * A configuration with both upstreams open to code (`deploy` needs an approval too: approved, then
 * asked by its server, in the same call), in a temporary folder removed at the end.
 */
export function writeInputConfig(
  upstreams: InputUpstreams,
  closers: Closers,
  extra: Record<string, unknown> = {},
): string {
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
