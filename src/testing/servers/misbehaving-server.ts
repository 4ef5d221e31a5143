/**
 * @module
 * An MCP server whose outputs are hostile or awkward, for testing the host: huge results,
 * images, embedded resources, several content blocks, `isError`, slow tools that observe
 * cancellation, tools added at runtime (`notifications/tools/list_changed`), and a `crash` tool
 * that ends the process (stdio only).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** Options of {@link createMisbehavingServer}. */
export interface MisbehavingServerOptions {
  /** @defaultValue `"misbehaving"` */
  name?: string;
  /** Allow the `crash` tool to exit the process. @defaultValue false */
  allowCrash?: boolean;
}

/** What a misbehaving server observed, for assertions. */
export interface MisbehavingServerProbe {
  /** Calls of `slow` that reached the server (so a test can cancel one in flight), by `label`. */
  started: string[];
  /** Calls of `slow` that were cancelled (by `notifications/cancelled`), by `label`. */
  cancelled: string[];
  /** Calls of `slow` that ran to the end. */
  completed: string[];
  /** Tools added through `add_tool`. */
  added: string[];
  /** Calls of `destroy` that reached the server (a destructive tool: for approval tests). */
  destroyed: number;
}

/** 1×1 transparent PNG. */
const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/**
 * A fresh misbehaving server and a probe of what it saw.
 *
 * @example
 * ```ts
 * const { server, probe } = createMisbehavingServer();
 * ```
 */
export function createMisbehavingServer(options: MisbehavingServerOptions = {}): {
  server: McpServer;
  probe: MisbehavingServerProbe;
} {
  const probe: MisbehavingServerProbe = {
    started: [],
    cancelled: [],
    completed: [],
    added: [],
    destroyed: 0,
  };
  const server = new McpServer(
    { name: options.name ?? 'misbehaving', version: '1.0.0' },
    { capabilities: { tools: { listChanged: true } } },
  );

  server.registerTool(
    'echo',
    {
      description: 'Returns its arguments.',
      inputSchema: {
        text: z.string().describe('Any text.'),
        count: z.number().int().min(0).max(10).optional(),
        mode: z.enum(['plain', 'loud']).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }),
  );

  server.registerTool(
    'plain_text',
    { description: 'Returns text that is not JSON.', inputSchema: {} },
    () => ({ content: [{ type: 'text', text: 'hello, not json {' }] }),
  );

  server.registerTool(
    'huge',
    {
      description: 'Returns `bytes` bytes of text.',
      inputSchema: {
        bytes: z
          .number()
          .int()
          .min(0)
          .max(64 * 1_048_576),
      },
      annotations: { readOnlyHint: true },
    },
    ({ bytes }) => ({ content: [{ type: 'text', text: 'x'.repeat(bytes) }] }),
  );

  server.registerTool(
    'image',
    {
      description: 'Returns an image and a caption.',
      inputSchema: { kb: z.number().int().min(0).max(8192).optional() },
    },
    ({ kb }) => ({
      content: [
        {
          type: 'image',
          data: kb ? Buffer.alloc(kb * 1024, 7).toString('base64') : PNG_1X1,
          mimeType: 'image/png',
        },
        { type: 'text', text: 'a caption' },
      ],
    }),
  );

  server.registerTool(
    'resources',
    { description: 'Returns an embedded text resource, a binary one and a link.', inputSchema: {} },
    () => ({
      content: [
        {
          type: 'resource',
          resource: { uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'some notes' },
        },
        {
          type: 'resource',
          resource: { uri: 'file:///blob.bin', mimeType: 'application/octet-stream', blob: 'AAECAw==' },
        },
        { type: 'resource_link', uri: 'file:///big.csv', name: 'big.csv', mimeType: 'text/csv' },
      ],
    }),
  );

  server.registerTool(
    'fail',
    { description: 'Always reports an error (isError).', inputSchema: { message: z.string().optional() } },
    ({ message }) => ({
      isError: true,
      content: [{ type: 'text', text: message ?? 'something went wrong on the server' }],
    }),
  );

  server.registerTool('throws', { description: 'Throws inside the handler.', inputSchema: {} }, () => {
    throw new Error('handler exploded');
  });

  server.registerTool(
    'structured',
    {
      description: 'Returns structured content matching its output schema.',
      inputSchema: { n: z.number() },
      outputSchema: { n: z.number(), doubled: z.number() },
      annotations: { readOnlyHint: true },
    },
    ({ n }) => ({
      content: [{ type: 'text', text: 'ignored text' }],
      structuredContent: { n, doubled: n * 2 },
    }),
  );

  server.registerTool(
    'slow',
    {
      description: 'Waits `ms` milliseconds, then answers; records cancellation.',
      inputSchema: { ms: z.number().int().min(0).max(600_000), label: z.string().optional() },
      annotations: { readOnlyHint: true },
    },
    async ({ ms, label }, extra) => {
      const name = label ?? 'slow';
      probe.started.push(name);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, ms);
        extra.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          probe.cancelled.push(name);
          resolve();
        });
      });
      if (!extra.signal.aborted) probe.completed.push(name);
      return { content: [{ type: 'text', text: JSON.stringify({ waited: ms, label: name }) }] };
    },
  );

  server.registerTool(
    'add_tool',
    {
      description: 'Registers a new tool `name` that returns `value`, and notifies list_changed.',
      inputSchema: { name: z.string().regex(/^[a-z_]{1,40}$/), value: z.string() },
    },
    ({ name, value }) => {
      server.registerTool(
        name,
        { description: `Added at runtime; returns ${value}.`, inputSchema: {} },
        () => ({
          content: [{ type: 'text', text: value }],
        }),
      );
      probe.added.push(name);
      return { content: [{ type: 'text', text: JSON.stringify({ added: name }) }] };
    },
  );

  server.registerTool(
    'destroy',
    {
      description: 'Pretends to delete everything.',
      inputSchema: {},
      annotations: { destructiveHint: true },
    },
    () => {
      probe.destroyed++;
      return { content: [{ type: 'text', text: 'destroyed' }] };
    },
  );

  server.registerTool(
    'crash',
    { description: 'Exits the server process (stdio only; when allowCrash is set).', inputSchema: {} },
    () => {
      // Exits without answering, so the caller sees a call in flight when the server died.
      if (options.allowCrash) process.kill(process.pid, 'SIGKILL');
      return { content: [{ type: 'text', text: options.allowCrash ? 'crashing' : 'crash is disabled' }] };
    },
  );

  return { server, probe };
}
