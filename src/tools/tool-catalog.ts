/**
 * @module
 * The catalog of the pool: every connected server's tools as {@link CatalogTool}s with their
 * resolved policy (callers, approval, timeout, deferral), the synthetic `read_resource` tool, the
 * lookup by qualified or sandbox name with a "did you mean" for unknown names, and the change
 * handed to catalog listeners. A server whose listing did not change keeps its tool objects.
 */
import { toolPolicyOf, type ToolPolicyConfig } from '../config/index.js';
import { CodecallError } from '../errors.js';
import type { JsonSchema } from '../types.js';
import { NameIndex } from '../util/edit-distance.js';
import { resolveRequireApproval } from './approval.js';
import { assignIdentifiers, qualifiedName } from './names.js';
import { clientDisabledBy, resolveAllowedCallers } from './policy.js';
import type { ListedTool, ServerConnection } from './server-connection.js';
import type { CatalogChange, CatalogListener, CatalogTool } from './tool-pool-types.js';

/**
 * What changed from `before` to `after` (tools matched by qualified name, compared by identity):
 * one pass over each.
 */
export function diffCatalogs(before: readonly CatalogTool[], after: readonly CatalogTool[]): CatalogChange {
  const left = new Map<string, CatalogTool>();
  for (const tool of before) left.set(tool.name, tool);
  const change: CatalogChange = { added: [], removed: [], changed: [] };
  for (const tool of after) {
    const previous = left.get(tool.name);
    if (previous === undefined) change.added.push(tool);
    else {
      left.delete(tool.name);
      if (previous !== tool) change.changed.push({ before: previous, after: tool });
    }
  }
  change.removed.push(...left.values());
  return change;
}

/** What the pool made of one server's tool list, kept so an unchanged listing keeps its tools. */
interface BuiltServer {
  listed: readonly ListedTool[];
  namespace: string;
  /** Whether the server offered resources (it then gets `read_resource`). */
  resources: boolean;
  entries: CatalogEntry[];
  /** Each listed tool by name: its listing, its JSON text (made on first compare), its entry. */
  byName: Map<string, { listed: ListedTool; json: string | undefined; entry: CatalogEntry }>;
}

/** JSON text of a listing, to tell a re-listed tool that did not change. */
function listingJson(listed: ListedTool): string {
  try {
    return JSON.stringify(listed);
  } catch {
    return '';
  }
}

export interface CatalogEntry {
  tool: CatalogTool;
  connection: ServerConnection;
  /** A tool codecall adds, answered on the host rather than by `tools/call`. */
  synthetic?: 'read_resource';
}

/**
 * The tool codecall adds to every server that offers resources, so scripts can read them:
 * `await tools.<server>.read_resource({ uri })` sends `resources/read` under the same host checks
 * and limits as a tool call. Open to code only unless `tools.read_resource.allowedCallers` says
 * otherwise (MCP clients read resources through `resources/read`). Not added when the server has
 * a tool of that name. The server's `allowedCallers` applies to it as to its tools.
 */
export const READ_RESOURCE_TOOL = 'read_resource';

const READ_RESOURCE_INPUT_SCHEMA: JsonSchema = {
  type: 'object',
  properties: {
    uri: { type: 'string', description: 'The URI of the resource, as the server lists it (resources/list).' },
  },
  required: ['uri'],
  additionalProperties: false,
};

/**
 * The catalog as last built: entries by qualified name and by sandbox alias, the frozen tool
 * list, and what each server's listing made (to keep unchanged tools).
 */
export class ToolCatalog {
  readonly #requireForDestructive: boolean;
  readonly #listeners = new Set<CatalogListener>();
  #entries = new Map<string, CatalogEntry>();
  #tools: readonly CatalogTool[] = [];
  /** Each server's tools as last built (see {@link BuiltServer}). */
  #built = new Map<ServerConnection, BuiltServer>();
  /** "Did you mean" index of the current catalog, built on the first unknown name. */
  #nameIndex: NameIndex | undefined;

  /** `requireForDestructive`: the configuration's `approvals.requireForDestructive`. */
  constructor(requireForDestructive: boolean) {
    this.#requireForDestructive = requireForDestructive;
  }

  /** Every tool (a frozen snapshot; replaced when the catalog changes). */
  tools(): readonly CatalogTool[] {
    return this.#tools;
  }

  /** One entry by qualified (`server.tool`) or sandbox (`namespace.member`) name. */
  entry(name: string): CatalogEntry | undefined {
    return this.#entries.get(name);
  }

  /** Calls `listener` whenever the catalog changes; returns the unsubscribe function. */
  onChange(listener: CatalogListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Forgets every listener (the pool closed). */
  clearListeners(): void {
    this.#listeners.clear();
  }

  /**
   * Rebuilds the catalog from every server's tool list; notifies listeners when asked, with the
   * change computed once here. A server whose tool list is the same array (no re-list) keeps its
   * tools as they were; a re-listed tool whose listing is unchanged keeps its object.
   */
  rebuild(connections: readonly ServerConnection[], notify: boolean): void {
    const namespaces = assignIdentifiers(connections.map((c) => c.name));
    const entries = new Map<string, CatalogEntry>();
    const aliases = new Map<string, CatalogEntry>();
    const tools: CatalogTool[] = [];
    const built = new Map<ServerConnection, BuiltServer>();
    for (const connection of connections) {
      const namespace = namespaces.get(connection.name)!;
      const previous = this.#built.get(connection);
      const server =
        previous !== undefined &&
        previous.listed === connection.tools &&
        previous.namespace === namespace &&
        previous.resources === Boolean(connection.capabilities?.resources)
          ? previous
          : this.#buildServer(connection, namespace, previous);
      built.set(connection, server);
      for (const entry of server.entries) {
        entries.set(entry.tool.name, entry);
        aliases.set(`${entry.tool.namespace}.${entry.tool.member}`, entry);
        tools.push(entry.tool);
      }
    }
    for (const [alias, entry] of aliases) if (!entries.has(alias)) entries.set(alias, entry);
    const before = this.#tools;
    this.#built = built;
    this.#entries = entries;
    this.#tools = Object.freeze(tools);
    this.#nameIndex = undefined;
    if (!notify || this.#listeners.size === 0) return;
    const change = diffCatalogs(before, this.#tools);
    for (const listener of this.#listeners) {
      try {
        listener(this.#tools, change);
      } catch {
        // A listener's failure must not break the pool.
      }
    }
  }

  /**
   * The error for a name the catalog lacks: `SERVER_UNAVAILABLE` when its server is known and not
   * connected, else `TOOL_NOT_FOUND` with the closest tool name.
   */
  notFound(
    name: string,
    connectionOf: (server: string) => ServerConnection | undefined,
  ): CodecallError<'SERVER_UNAVAILABLE'> | CodecallError<'TOOL_NOT_FOUND'> {
    const dot = name.indexOf('.');
    const connection = dot > 0 ? connectionOf(name.slice(0, dot)) : undefined;
    if (connection && connection.state !== 'connected' && !this.#entries.has(name)) {
      return new CodecallError(
        'SERVER_UNAVAILABLE',
        `Cannot call ${name}: MCP server "${connection.name}" is ${connection.state}` +
          `${connection.lastError ? ` (${connection.lastError.message.split('\n')[0]})` : ''}.`,
        { details: { tool: name, server: connection.name, state: connection.state } },
      );
    }
    const suggestion = (this.#nameIndex ??= new NameIndex(this.#tools.map((t) => t.name))).closest(name, {
      limit: 1,
      maxDistance: Math.max(2, Math.floor(name.length / 3)),
    })[0];
    return new CodecallError(
      'TOOL_NOT_FOUND',
      `No tool "${name}".${suggestion ? ` Did you mean "${suggestion}"?` : ''} Tools are named "server.tool"; search for the right one.`,
      { details: { tool: name, ...(suggestion ? { suggestion } : {}) } },
    );
  }

  /** Builds one server's catalog tools, reusing those of `previous` whose listing is unchanged. */
  #buildServer(
    connection: ServerConnection,
    namespace: string,
    previous: BuiltServer | undefined,
  ): BuiltServer {
    const config = connection.config;
    const resources = Boolean(connection.capabilities?.resources);
    const server: BuiltServer = {
      listed: connection.tools,
      namespace,
      resources,
      entries: [],
      byName: new Map(),
    };
    const members = assignIdentifiers(connection.tools.map((t) => t.name));
    for (const listed of connection.tools) {
      const member = members.get(listed.name)!;
      const kept = previous?.namespace === namespace ? previous.byName.get(listed.name) : undefined;
      if (kept !== undefined && kept.entry.tool.member === member) {
        kept.json ??= listingJson(kept.listed);
        const json = kept.listed === listed ? kept.json : listingJson(listed);
        if (json === kept.json && json !== '') {
          server.entries.push(kept.entry);
          server.byName.set(listed.name, { listed, json, entry: kept.entry });
          continue;
        }
      }
      const policy: ToolPolicyConfig = toolPolicyOf(config, listed.name);
      const callers = resolveAllowedCallers({
        tool: policy.allowedCallers,
        server: config.allowedCallers,
        annotations: listed.annotations,
        disabledBy: clientDisabledBy(config, listed.name),
      });
      const approval = resolveRequireApproval({
        tool: policy.requireApproval,
        server: config.requireApproval,
        annotations: listed.annotations,
        requireForDestructive: this.#requireForDestructive,
      });
      const tool: CatalogTool = {
        name: qualifiedName(connection.name, listed.name),
        server: connection.name,
        tool: listed.name,
        namespace,
        member,
        description: listed.description,
        inputSchema: listed.inputSchema,
        allowedCallers: callers.allowedCallers,
        allowedCallersSource: callers.source,
        requireApproval: approval.requireApproval,
        requireApprovalSource: approval.source,
        deferLoading: policy.deferLoading,
        timeoutMs: policy.timeoutMs,
      };
      if (listed.title !== undefined) tool.title = listed.title;
      if (listed.outputSchema !== undefined) tool.outputSchema = listed.outputSchema;
      if (listed.annotations !== undefined) tool.annotations = listed.annotations;
      if (policy.inputExamples.length > 0) tool.inputExamples = policy.inputExamples;
      if (callers.disabledBy !== undefined) tool.disabledBy = callers.disabledBy;
      Object.freeze(tool);
      const entry: CatalogEntry = { tool, connection };
      server.entries.push(entry);
      server.byName.set(listed.name, { listed, json: undefined, entry });
    }
    const taken = new Set([...members.keys(), ...members.values()]);
    if (resources && !taken.has(READ_RESOURCE_TOOL)) {
      const kept = previous?.entries.find((entry) => entry.synthetic === 'read_resource');
      if (kept !== undefined && kept.tool.namespace === namespace) server.entries.push(kept);
      else {
        const policy: ToolPolicyConfig = toolPolicyOf(config, READ_RESOURCE_TOOL);
        const tool: CatalogTool = Object.freeze({
          name: qualifiedName(connection.name, READ_RESOURCE_TOOL),
          server: connection.name,
          tool: READ_RESOURCE_TOOL,
          namespace,
          member: READ_RESOURCE_TOOL,
          description:
            `Reads a resource of MCP server "${connection.name}" by its URI (MCP resources/read). ` +
            'Returns { contents: [{ uri, mimeType, text } or { uri, mimeType, blob (base64) }] }.',
          inputSchema: READ_RESOURCE_INPUT_SCHEMA,
          allowedCallers: [
            ...(policy.allowedCallers ?? config.allowedCallers ?? (['code_execution'] as const)),
          ],
          allowedCallersSource: policy.allowedCallers ? 'tool' : config.allowedCallers ? 'server' : 'default',
          deferLoading: policy.deferLoading,
          timeoutMs: policy.timeoutMs,
        });
        server.entries.push({ tool, connection, synthetic: 'read_resource' });
      }
    }
    return server;
  }
}
