/**
 * @module
 * What the sandbox derives from the tools a run may call, built once per bindings array and
 * shared by every run that gets the same array (the executor hands all runs of one catalog
 * version the same one): the name → binding map the host checks calls against, the longest
 * name, the names whose calls report their line, and the list a script sees when it enumerates
 * `tools`. A run then costs the same against 10 tools or 10,000: no tool crosses into the
 * isolate unless the script lists them.
 */
import type { SandboxToolBinding } from '../types.js';

/** Names of the calls `store.get` / `store.set` (src/execute/script-store.ts): no tools of `tools`. */
const STORE_CALLS: ReadonlySet<string> = new Set(['codecall:store.get', 'codecall:store.set']);

/** What an engine run gets of its catalog: plain data, and the list only on demand. */
export interface EngineToolCatalog {
  /** Identifies the catalog (unique per process): a worker keeps lists by it. */
  id: number;
  /** Length of the longest spelling of a tool name (qualified or `namespace.member`). */
  maxNameChars: number;
  /** Both spellings of every tool whose calls report their script line. */
  lineNames: string[];
  /** Whether the run has `store` (the store's calls are bound). */
  store: boolean;
  /**
   * JSON `[[namespace, member], …]`, made on first use: read when a script enumerates `tools`,
   * and by a worker that suggests names. A tool whose qualified name is not `namespace.member`
   * has it third: `[namespace, member, name]`.
   */
  list(): string;
}

let nextId = 1;

/** The per-catalog structures of the sandbox, shared by runs (see {@link SandboxToolCatalog.of}). */
export class SandboxToolCatalog {
  /** Each tool by its qualified name and by `namespace.member`. */
  readonly byName: ReadonlyMap<string, SandboxToolBinding>;
  readonly engine: EngineToolCatalog;
  #listJson: string | undefined;

  private constructor(tools: readonly SandboxToolBinding[]) {
    const byName = new Map<string, SandboxToolBinding>();
    const lineNames: string[] = [];
    let maxNameChars = 0;
    let store = false;
    for (const tool of tools) {
      const written = `${tool.namespace}.${tool.member}`;
      byName.set(tool.name, tool);
      byName.set(written, tool);
      maxNameChars = Math.max(maxNameChars, tool.name.length, written.length);
      if (STORE_CALLS.has(tool.name)) store = true;
      if (tool.reportsLine === true) lineNames.push(tool.name, written);
    }
    this.byName = byName;
    this.engine = { id: nextId++, maxNameChars, lineNames, store, list: () => this.#list(tools) };
  }

  #list(tools: readonly SandboxToolBinding[]): string {
    this.#listJson ??= JSON.stringify(
      tools
        // The host's own calls (store, result handles) are no tools of `tools`.
        .filter((tool) => !tool.name.startsWith('codecall:'))
        .map((tool) =>
          tool.name === `${tool.namespace}.${tool.member}`
            ? [tool.namespace, tool.member]
            : [tool.namespace, tool.member, tool.name],
        ),
    );
    return this.#listJson;
  }

  /** The catalog of `tools`, built on the first run that gets this array and then shared. */
  static of(tools: readonly SandboxToolBinding[]): SandboxToolCatalog {
    let catalog = catalogs.get(tools);
    if (!catalog) catalogs.set(tools, (catalog = new SandboxToolCatalog(tools)));
    return catalog;
  }
}

const catalogs = new WeakMap<readonly SandboxToolBinding[], SandboxToolCatalog>();
