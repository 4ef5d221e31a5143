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
 * transparent).
 */
import { assignIdentifiers } from '../tools/index.js';

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
