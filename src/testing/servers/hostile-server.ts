/**
 * @module
 * An MCP server whose tool list is whatever the test says, sent raw: JSON Schemas with
 * catastrophic `pattern`s, self-referencing `$ref`s, `$ref` DAGs that expand exponentially,
 * thousands of tools. Every tool answers with its arguments. `setTools` replaces the list and
 * sends `notifications/tools/list_changed`, as a server that churns its catalog would.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

/** One tool as the hostile server lists it (nothing is checked). */
export interface HostileTool {
  name: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
}

/** Options of {@link createHostileServer}. */
export interface HostileServerOptions {
  /** @defaultValue `"hostile"` */
  name?: string;
  /** The initial tool list. */
  tools: readonly HostileTool[];
}

/** Controls a hostile server from the test. */
export interface HostileServerControl {
  /** Tool calls received, by tool name. */
  calls: string[];
  /** Replaces the tool list of every server made by the factory and notifies `list_changed`. */
  setTools(tools: readonly HostileTool[]): Promise<void>;
}

/**
 * A factory of hostile servers (for `inMemoryTransport`) sharing one tool list, and its control.
 *
 * @example
 * ```ts
 * const { create, control } = createHostileServer({ tools: [{ name: 'slug', inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(\\w+\\s?)*$' } } } }] });
 * const pool = await ToolPool.open({}, { transports: { hostile: inMemoryTransport(create) } });
 * ```
 */
export function createHostileServer(options: HostileServerOptions): {
  create: () => Server;
  control: HostileServerControl;
} {
  let tools = [...options.tools];
  const servers: Server[] = [];
  const control: HostileServerControl = {
    calls: [],
    async setTools(next) {
      tools = [...next];
      await Promise.all(servers.map((server) => server.sendToolListChanged().catch(() => {})));
    },
  };
  const create = (): Server => {
    const server = new Server(
      { name: options.name ?? 'hostile', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: tools.map((tool) => ({
        name: tool.name,
        description: tool.description ?? '',
        inputSchema: tool.inputSchema ?? { type: 'object' },
        ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, (request) => {
      control.calls.push(request.params.name);
      return { content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] };
    });
    servers.push(server);
    server.onclose = () => servers.splice(servers.indexOf(server), 1);
    return server;
  };
  return { create, control };
}
