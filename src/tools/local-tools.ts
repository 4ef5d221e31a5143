/**
 * @module
 * Local tools: plain TypeScript functions registered beside the MCP servers. {@link defineTool}
 * describes one (name, description, a JSON Schema or zod input schema, `execute`);
 * {@link localTools} serves a set of them as an in-process MCP server over the SDK's linked
 * in-memory transports, for `ToolPool.open(…, { transports })` (or `CodecallRuntime.open({ tools:
 * { transports } })`). They then go through exactly what MCP tools go through: the catalog and
 * search, `allowedCallers` policy, input validation on the host, timeouts, result limits, the
 * run journal and usage history — callable from code and directly.
 *
 * `execute` runs in the host process: it is your code, trusted like the host. A result is
 * returned as JSON (`structuredContent` for an object); a thrown error becomes the tool's error
 * result, which the script or model reads.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type ToolAnnotations,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { CodecallError, isErrorLike } from '../errors.js';
import type { JsonSchema } from '../types.js';

/** A zod schema of an object input (what `z.object({...})` returns). */
type ZodInput = z.ZodType<Record<string, unknown>>;

/** What {@link defineTool} takes. */
export interface LocalToolDefinition<Input = Record<string, unknown>> {
  /** The tool's name within its server (`[A-Za-z0-9_.-]`, as MCP tool names). */
  name: string;
  /** What the tool does, written for the model. */
  description: string;
  /** Its input: a JSON Schema of an object, or a zod object schema (parsed before `execute`). */
  inputSchema: JsonSchema | z.ZodType<Input>;
  /** A display title. */
  title?: string;
  /** MCP annotations (`readOnlyHint`, `destructiveHint`…); they feed the default `allowedCallers`. */
  annotations?: ToolAnnotations;
  /** Runs the tool; the signal fires when the call is cancelled or times out. */
  execute: (input: Input, options: { signal: AbortSignal }) => unknown;
}

/** A tool made by {@link defineTool}. */
export interface LocalTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  readonly title?: string;
  readonly annotations?: ToolAnnotations;
  /** Parses `args` (zod) and runs the tool. */
  readonly run: (args: Record<string, unknown>, signal: AbortSignal) => Promise<unknown>;
}

const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;

function isZod(schema: unknown): schema is ZodInput {
  return typeof schema === 'object' && schema !== null && '_zod' in schema;
}

/**
 * A local tool. Throws `INVALID_ARGUMENT` for a bad name, a missing description or an input
 * schema that is not an object schema.
 *
 * @example
 * ```ts
 * const fx = defineTool({
 *   name: 'convert_currency',
 *   description: 'Convert an amount between currencies at today’s rate.',
 *   inputSchema: z.object({ amount: z.number(), from: z.string(), to: z.string() }),
 *   execute: ({ amount, from, to }) => ({ amount: amount * rate(from, to), currency: to }),
 * });
 * const runtime = await CodecallRuntime.open({ tools: { transports: { finance: localTools([fx]) } } });
 * ```
 */
export function defineTool<Input = Record<string, unknown>>(
  definition: LocalToolDefinition<Input>,
): LocalTool {
  const field = (name: string) => `defineTool(${JSON.stringify(String(definition?.name))}).${name}`;
  if (typeof definition?.name !== 'string' || !TOOL_NAME.test(definition.name)) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${field('name')} must be 1–128 characters of [A-Za-z0-9_.-].`,
      {
        details: { field: 'name', value: definition?.name },
      },
    );
  }
  if (typeof definition.description !== 'string' || definition.description.trim() === '') {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${field('description')} must say what the tool does, for the model.`,
      {
        details: { field: 'description' },
      },
    );
  }
  if (typeof definition.execute !== 'function') {
    throw new CodecallError('INVALID_ARGUMENT', `${field('execute')} must be a function.`, {
      details: { field: 'execute' },
    });
  }
  const zod = isZod(definition.inputSchema) ? definition.inputSchema : undefined;
  const inputSchema = (zod ? z.toJSONSchema(zod, { io: 'input' }) : definition.inputSchema) as JsonSchema;
  if (
    typeof inputSchema !== 'object' ||
    inputSchema === null ||
    (inputSchema as { type?: unknown }).type !== 'object'
  ) {
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `${field('inputSchema')} must be an object schema ({ type: "object", properties: … } or z.object({…})).`,
      { details: { field: 'inputSchema' } },
    );
  }
  const execute = definition.execute;
  return {
    name: definition.name,
    description: definition.description,
    inputSchema,
    ...(definition.title !== undefined ? { title: definition.title } : {}),
    ...(definition.annotations !== undefined ? { annotations: definition.annotations } : {}),
    run: async (args, signal) => execute((zod ? zod.parse(args) : args) as Input, { signal }),
  };
}

function toResult(value: unknown): CallToolResult {
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] };
  const text = JSON.stringify(value ?? null) ?? 'null';
  const structured = typeof value === 'object' && value !== null && !Array.isArray(value);
  return {
    content: [{ type: 'text', text }],
    ...(structured ? { structuredContent: value as Record<string, unknown> } : {}),
  };
}

function errorMessage(error: unknown): string {
  // By name and issues, not `instanceof`: a tool's schema may come from the caller's own copy of zod.
  if (
    isErrorLike(error) &&
    error.name === 'ZodError' &&
    Array.isArray((error as { issues?: unknown }).issues)
  )
    return `Invalid arguments: ${z.prettifyError(error as z.ZodError)}`;
  return error instanceof Error ? error.message : String(error);
}

/** An MCP server that lists and runs `tools`. */
async function createLocalServer(name: string, tools: readonly LocalTool[]): Promise<Server> {
  // The MCP server stack loads when local tools are first connected, not with the tool pool.
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const byName = new Map(tools.map((tool) => [tool.name, tool]));
  const server = new Server({ name, version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      inputSchema: tool.inputSchema as { type: 'object' },
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      ...(tool.annotations !== undefined ? { annotations: tool.annotations } : {}),
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const tool = byName.get(request.params.name);
    if (tool === undefined) {
      return { isError: true, content: [{ type: 'text', text: `No local tool "${request.params.name}".` }] };
    }
    try {
      return toResult(await tool.run(request.params.arguments ?? {}, extra.signal));
    } catch (error) {
      return { isError: true, content: [{ type: 'text', text: errorMessage(error) }] };
    }
  });
  return server;
}

/**
 * A transport factory serving `tools` as one in-process MCP server (a fresh server per
 * connection, as a restarted process would be). Throws `INVALID_ARGUMENT` on duplicate names.
 */
export function localTools(
  tools: readonly LocalTool[],
  options: { name?: string } = {},
): () => Promise<Transport> {
  const seen = new Set<string>();
  for (const tool of tools) {
    if (seen.has(tool.name)) {
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `Two local tools are named "${tool.name}"; names must be unique.`,
        {
          details: { field: 'name', value: tool.name },
        },
      );
    }
    seen.add(tool.name);
  }
  const list = [...tools];
  return async () => {
    const { InMemoryTransport } = await import('@modelcontextprotocol/sdk/inMemory.js');
    const [client, server] = InMemoryTransport.createLinkedPair();
    await (await createLocalServer(options.name ?? 'codecall-local-tools', list)).connect(server);
    return client;
  };
}
