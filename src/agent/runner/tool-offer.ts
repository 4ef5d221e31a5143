/**
 * @module
 * The tools one step offers the model. Code mode: the meta-tools, the tools configured
 * `deferLoading: false` the model may call, and direct-only tools a search found (from the next
 * step). Direct mode: every tool the model may call. Definitions are cached per catalog tool, so
 * the list stays byte-stable between steps (prompt caches keep hitting).
 */
import type { CodecallRuntime } from '../../execute/index.js';
import {
  assignDirectNames,
  directToolDefinition,
  executeCodeDefinition,
  searchToolsDefinition,
} from '../../meta/index.js';
import type { ToolDefinition } from '../../providers/language-model.js';
import type { CatalogTool } from '../../tools/index.js';
import type { AgentMode } from '../types.js';

/** What one step offers: the definitions, and the MCP tool behind each direct name. */
export interface Offer {
  definitions: ToolDefinition[];
  direct: Map<string, CatalogTool>;
  /** Direct names of every tool of the catalog (for guidance on unknown names). */
  names: Map<string, string>;
  catalog: CatalogTool[];
}

function byName(a: CatalogTool, b: CatalogTool): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Builds each step's {@link Offer} over the runtime's live catalog. */
export class ToolOffer {
  readonly #runtime: CodecallRuntime;
  readonly #mode: AgentMode;
  readonly #definitions = new WeakMap<CatalogTool, ToolDefinition>();
  readonly #metaDefinitions: ToolDefinition[];

  constructor(runtime: CodecallRuntime, mode: AgentMode) {
    this.#runtime = runtime;
    this.#mode = mode;
    this.#metaDefinitions = [
      searchToolsDefinition(),
      executeCodeDefinition({
        ...runtime.config.sandbox.limits,
        store: runtime.scriptStore !== undefined,
      }),
    ];
  }

  #definition(tool: CatalogTool, name: string): ToolDefinition {
    let definition = this.#definitions.get(tool);
    if (definition === undefined || definition.name !== name) {
      definition = directToolDefinition(tool, name);
      this.#definitions.set(tool, definition);
    }
    return definition;
  }

  /** What a direct-mode request offers: every tool the model may call. */
  directDefinitions(): ToolDefinition[] {
    const catalog = this.#runtime.catalog();
    const names = assignDirectNames(catalog);
    return catalog
      .filter((tool) => tool.allowedCallers.includes('direct'))
      .map((tool) => this.#definition(tool, names.get(tool.name)!));
  }

  /** The tools one step offers, given the direct-only tools searches `found` so far. */
  offer(found: readonly string[]): Offer {
    const catalog = this.#runtime.catalog();
    const names = assignDirectNames(catalog);
    const index = new Map(catalog.map((tool) => [tool.name, tool]));
    const callable = catalog.filter((tool) => tool.allowedCallers.includes('direct')).sort(byName);
    const chosen: CatalogTool[] =
      this.#mode === 'direct' ? callable : callable.filter((tool) => !tool.deferLoading);
    if (this.#mode === 'code') {
      const initial = new Set(chosen.map((tool) => tool.name));
      for (const name of found) {
        const tool = index.get(name);
        if (tool && tool.allowedCallers.includes('direct') && !initial.has(name)) chosen.push(tool);
      }
    }
    const direct = new Map<string, CatalogTool>();
    const definitions = this.#mode === 'code' ? [...this.#metaDefinitions] : [];
    for (const tool of chosen) {
      const name = names.get(tool.name)!;
      direct.set(name, tool);
      definitions.push(this.#definition(tool, name));
    }
    return { definitions, direct, names, catalog };
  }
}
