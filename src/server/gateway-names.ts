/**
 * @module
 * How the gateway names what upstream servers offer besides tools, so that several servers can
 * sit behind one: prompts are `<namespace>__<prompt>` (the namespace of the server's tools, as
 * pass-through tools are `<namespace>__<tool>`), resource URIs and URI templates are
 * `<scheme>+<original URI>` where `<scheme>` is the server's name made URI-scheme-safe
 * (`my_server` → `my-server`): `my-server+file:///notes.txt`. Both map back without a lookup
 * table (the prefix names the server), and a template stays a template
 * (`everything+test://template/{id}/data`). With `originalNames`, a capability offered by one
 * connected server alone keeps its original names and URIs (a gateway in front of one server is
 * transparent); with several servers offering prompts, a prompt no other server lists keeps its
 * name too (the gateway reads their lists to know, gateway.ts).
 */
import { assignDirectNames, EXECUTE_CODE_NAME, SEARCH_TOOLS_NAME } from '../meta/index.js';
import { assignIdentifiers, type CatalogTool, type UpstreamServer } from '../tools/index.js';

/** The separator between a server's namespace and a prompt name (as in pass-through tool names). */
export const PROMPT_NAME_SEPARATOR = '__';

/** Turns a server name into a URI scheme: lowercase letters, digits, `-` and `.`, a letter first. */
function toScheme(name: string): string {
  let out = name.toLowerCase().replace(/[^a-z0-9.-]/g, '-');
  if (!/^[a-z]/.test(out)) out = `s${out}`;
  return out;
}

/** The gateway's names for one set of servers: prompt namespaces and URI schemes, both ways. */
export class GatewayNames {
  private readonly namespaces: Map<string, string>;
  private readonly schemes = new Map<string, string>();
  private readonly byNamespace = new Map<string, string>();
  private readonly byScheme = new Map<string, string>();

  constructor(servers: readonly string[]) {
    this.namespaces = assignIdentifiers(servers);
    for (const [server, namespace] of this.namespaces) this.byNamespace.set(namespace, server);
    const taken = new Set<string>();
    for (const server of [...new Set(servers)].sort()) {
      const base = toScheme(server);
      let scheme = base;
      for (let n = 2; taken.has(scheme); n++) scheme = `${base}-${n}`;
      taken.add(scheme);
      this.schemes.set(server, scheme);
      this.byScheme.set(scheme, server);
    }
  }

  /** `<namespace>__<prompt>`. */
  promptName(server: string, prompt: string): string {
    return `${this.namespaces.get(server) ?? server}${PROMPT_NAME_SEPARATOR}${prompt}`;
  }

  /** The server and original name of a namespaced prompt name; undefined when it is not one. */
  parsePromptName(name: string): { server: string; name: string } | undefined {
    let best: { server: string; name: string } | undefined;
    for (const [namespace, server] of this.byNamespace) {
      const prefix = `${namespace}${PROMPT_NAME_SEPARATOR}`;
      if (name.startsWith(prefix) && name.length > prefix.length) {
        if (!best || namespace.length > (this.namespaces.get(best.server) ?? '').length)
          best = { server, name: name.slice(prefix.length) };
      }
    }
    return best;
  }

  /** `<scheme>+<uri>` (also for URI templates). */
  uri(server: string, uri: string): string {
    return `${this.schemes.get(server) ?? toScheme(server)}+${uri}`;
  }

  /** The server and original URI of a namespaced URI; undefined when it is not one. */
  parseUri(uri: string): { server: string; uri: string } | undefined {
    const plus = uri.indexOf('+');
    if (plus <= 0) return undefined;
    const server = this.byScheme.get(uri.slice(0, plus));
    const rest = uri.slice(plus + 1);
    return server !== undefined && /^[A-Za-z][A-Za-z0-9+.-]*:/.test(rest) ? { server, uri: rest } : undefined;
  }
}

/**
 * Whether two {@link passThroughTools} lists are the same: the pool keeps the object of a tool
 * whose listing did not change, so the same names mapped to the same objects mean no change.
 */
export function samePassThroughTools(
  a: ReadonlyMap<string, CatalogTool>,
  b: ReadonlyMap<string, CatalogTool>,
): boolean {
  if (a.size !== b.size) return false;
  for (const [name, tool] of a) if (b.get(name) !== tool) return false;
  return true;
}

/**
 * The tools `codecall serve` passes through to clients, by the name clients see: tools the
 * configuration opens to direct calls (`allowedCallers` contains `"direct"`, `deferLoading:
 * false`), named `<namespace>__<tool>` over the whole catalog (so a tool keeps its name as others
 * come and go), or the original name with `originalNames` when no other exposed tool has it.
 */
export function passThroughTools(
  catalog: readonly CatalogTool[],
  originalNames: boolean,
): Map<string, CatalogTool> {
  const names = assignDirectNames(catalog);
  const exposed = catalog.filter((tool) => tool.allowedCallers.includes('direct') && !tool.deferLoading);
  const counts = new Map<string, number>();
  for (const tool of exposed) counts.set(tool.tool, (counts.get(tool.tool) ?? 0) + 1);
  const namespaced = new Set(exposed.map((tool) => names.get(tool.name)!));
  const out = new Map<string, CatalogTool>();
  for (const tool of exposed) {
    const original =
      originalNames &&
      counts.get(tool.tool) === 1 &&
      tool.tool !== SEARCH_TOOLS_NAME &&
      tool.tool !== EXECUTE_CODE_NAME &&
      (!namespaced.has(tool.tool) || names.get(tool.name) === tool.tool);
    out.set(original ? tool.tool : names.get(tool.name)!, tool);
  }
  return out;
}

/** How `codecall serve` names what one upstream server offers (for `codecall tools`). */
export interface ServedNames {
  /** Pass-through tool names by qualified tool name (`server.tool`); absent: not passed through. */
  tools: Map<string, string>;
  /** Per server: the prompt-name and resource-URI patterns clients see, when it offers those. */
  servers: Map<string, { prompts?: string; resources?: string }>;
}

/** The names `codecall serve` gives the catalog and the upstream servers' prompts and resources. */
export function servedNames(
  catalog: readonly CatalogTool[],
  upstreams: readonly UpstreamServer[],
  originalNames: boolean,
): ServedNames {
  const tools = new Map<string, string>();
  for (const [name, tool] of passThroughTools(catalog, originalNames)) tools.set(tool.name, name);
  const names = new GatewayNames(upstreams.map((u) => u.name));
  const connected = upstreams.filter((u) => u.state === 'connected' && u.capabilities !== undefined);
  const sole = (test: (u: UpstreamServer) => unknown): string | undefined => {
    const offering = connected.filter(test);
    return originalNames && offering.length === 1 ? offering[0]!.name : undefined;
  };
  const promptsSole = sole((u) => u.capabilities?.prompts);
  const resourcesSole = sole((u) => u.capabilities?.resources);
  const servers = new Map<string, { prompts?: string; resources?: string }>();
  for (const upstream of connected) {
    const entry: { prompts?: string; resources?: string } = {};
    if (upstream.capabilities?.prompts)
      entry.prompts =
        promptsSole === upstream.name
          ? '<prompt>'
          : originalNames
            ? `<prompt> (${names.promptName(upstream.name, '<prompt>')} when another server has one of that name)`
            : names.promptName(upstream.name, '<prompt>');
    if (upstream.capabilities?.resources)
      entry.resources = resourcesSole === upstream.name ? '<uri>' : names.uri(upstream.name, '<uri>');
    servers.set(upstream.name, entry);
  }
  return { tools, servers };
}
