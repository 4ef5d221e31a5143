/**
 * What the MCP 2026-07-28 e2e tests share: `codecall serve --http --mcp-2026` processes, a plain
 * round-robin HTTP proxy in front of several of them, the SDK v2 client pinned to 2026 (or in auto
 * mode), the raw 2026 `tools/call` that creates a task (SDK 2.4's client cannot decode
 * `resultType: "task"`), and `tasks/get` polling.
 */
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { z } from 'zod';
import { spawnServe, type ServeProcess } from './serve-helpers.js';

/** The Tasks extension's identifier (SEP-2663). */
export const TASKS = 'io.modelcontextprotocol/tasks';

/** Starts `codecall serve --http --mcp-2026` on a free port; `serves` collects it for clean-up. */
export async function startServe2026(
  serves: ServeProcess[],
  configPath: string,
  args: string[] = [],
  env: NodeJS.ProcessEnv = {},
): Promise<{ serve: ServeProcess; url: string }> {
  const serve = spawnServe(['--http', '--mcp-2026', '--port', '0', '--config', configPath, ...args], { env });
  serves.push(serve);
  const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
  return { serve, url };
}

/** A round-robin proxy: its URL, the requests each target got, and its server (close it). */
export interface RoundRobinProxy {
  url: string;
  hits: number[];
  server: Server;
}

/**
 * A plain round-robin HTTP proxy: each request to the next target, no affinity. With `failover`,
 * a request whose target refuses the connection goes to the next one (a load balancer's passive
 * health check); a request already forwarded is never retried.
 */
export async function roundRobin(
  targets: string[],
  options: { failover?: boolean } = {},
): Promise<RoundRobinProxy> {
  const hits = targets.map(() => 0);
  let next = 0;
  const proxy = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      const attempt = (left: number): void => {
        const index = next++ % targets.length;
        const target = new URL(targets[index]!);
        const forward = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: incoming.url,
            method: incoming.method,
            headers: { ...incoming.headers, host: target.host },
          },
          (answer) => {
            hits[index]!++;
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(outgoing);
          },
        );
        forward.on('error', (error: NodeJS.ErrnoException) => {
          if (options.failover === true && error.code === 'ECONNREFUSED' && left > 1) attempt(left - 1);
          else if (!outgoing.headersSent) outgoing.writeHead(502).end();
          else outgoing.destroy();
        });
        forward.end(body);
      };
      attempt(targets.length);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`, hits, server: proxy };
}

/** Options of {@link connect2026}. */
export interface Connect2026Options {
  name?: string;
  /** `pin` (2026-07-28 only, the default) or `auto` (probe `server/discover`, fall back). */
  mode?: 'pin' | 'auto';
  /** Declare the Tasks extension in every request's capabilities. */
  tasks?: boolean;
  /** Answer every elicitation with `approve`; each form's message goes to `asked`. */
  approve?: boolean;
  asked?: string[];
}

/** The SDK v2 client, connected to `url`. */
export async function connect2026(url: string, options: Connect2026Options = {}): Promise<Client> {
  const client = new Client(
    { name: options.name ?? 'e2e-2026', version: '1.0.0' },
    {
      capabilities: {
        elicitation: { form: {} },
        ...(options.tasks === true ? { extensions: { [TASKS]: {} } } : {}),
      },
      versionNegotiation: { mode: options.mode === 'auto' ? 'auto' : { pin: '2026-07-28' } },
    },
  );
  if (options.approve !== undefined) {
    const { approve, asked } = options;
    client.setRequestHandler('elicitation/create', (request) => {
      asked?.push(request.params.message);
      return { action: 'accept', content: { approve } };
    });
  }
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

/**
 * `execute_code` as the 2026 `tools/call` the SDK client would send, declaring the extension (and
 * `capabilities` beside it, e.g. `elicitation`).
 */
export async function callAsTask(
  url: string,
  code: string,
  capabilities: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'execute_code',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 'execute_code',
        arguments: { code },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'e2e-2026-tasks-raw', version: '1.0.0' },
          'io.modelcontextprotocol/clientCapabilities': { ...capabilities, extensions: { [TASKS]: {} } },
        },
      },
    }),
  });
  const body = (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
  if (body.result === undefined) throw new Error(`no result: ${JSON.stringify(body)}`);
  return body.result;
}

export const TaskSchema = z.looseObject({
  taskId: z.string(),
  status: z.string(),
  createdAt: z.string(),
  lastUpdatedAt: z.string(),
  ttlMs: z.number().nullable(),
  pollIntervalMs: z.number().optional(),
  statusMessage: z.string().optional(),
  inputRequests: z.record(z.string(), z.unknown()).optional(),
  result: z
    .looseObject({ content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })) })
    .optional(),
  error: z.looseObject({ code: z.number(), message: z.string() }).optional(),
});
export type Task2026 = z.infer<typeof TaskSchema>;

export const getTask = (client: Client, taskId: string): Promise<Task2026> =>
  client.request({ method: 'tasks/get', params: { taskId } }, TaskSchema);

/** Polls `tasks/get` (at the task's own `pollIntervalMs`) until `done` holds; bounded by `timeoutMs`. */
export async function pollUntil(
  client: Client,
  taskId: string,
  done: (task: Task2026) => boolean,
  timeoutMs = 90_000,
): Promise<{ task: Task2026; seen: string[] }> {
  const seen: string[] = [];
  const until = Date.now() + timeoutMs;
  for (;;) {
    const task = await getTask(client, taskId);
    if (seen.at(-1) !== task.status) seen.push(task.status);
    if (done(task)) return { task, seen };
    if (Date.now() > until) throw new Error(`task ${taskId} still ${task.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, task.pollIntervalMs ?? 1_000));
  }
}

export const terminal = (task: Task2026): boolean =>
  ['completed', 'failed', 'cancelled'].includes(task.status);

/** The text blocks of a tool result, joined. */
export function resultText(result: unknown): string {
  return ((result as { content?: { type: string; text?: string }[] }).content ?? [])
    .map((c) => (c.type === 'text' ? (c.text ?? '') : ''))
    .join('\n');
}
