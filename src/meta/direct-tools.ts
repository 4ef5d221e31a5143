/**
 * @module
 * MCP tools as tools the model calls directly: provider-safe names (`<server>__<tool>`, at most
 * 64 characters of `[A-Za-z0-9_-]`, unique, never a meta-tool's name) and their definitions.
 * Names are assigned over the whole catalog at once, so a tool keeps its name however many
 * others are offered next to it.
 */
import type { CatalogTool } from '../tools/index.js';
import { EXECUTE_CODE_NAME, SEARCH_TOOLS_NAME, type MetaToolDefinition } from './meta-tools.js';

/** Separator of `<server>__<tool>` names. */
const SEPARATOR = '__';
/** Longest tool name Anthropic and OpenAI accept. */
const MAX_TOOL_NAME_CHARS = 64;

/** The direct name of every tool in `catalog`, keyed by qualified name (`server.tool`). */
export function assignDirectNames(catalog: readonly CatalogTool[]): Map<string, string> {
  const taken = new Set<string>([SEARCH_TOOLS_NAME, EXECUTE_CODE_NAME]);
  const names = new Map<string, string>();
  const sorted = [...catalog].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const tool of sorted) {
    const base = `${tool.namespace}${SEPARATOR}${tool.member}`
      .replace(/[^A-Za-z0-9_-]/g, '_')
      .slice(0, MAX_TOOL_NAME_CHARS);
    let name = base;
    for (let n = 2; taken.has(name); n++) {
      const suffix = `_${n}`;
      name = `${base.slice(0, MAX_TOOL_NAME_CHARS - suffix.length)}${suffix}`;
    }
    taken.add(name);
    names.set(tool.name, name);
  }
  return names;
}

/** The definition of `tool` as the model sees it under `name`. */
export function directToolDefinition(tool: CatalogTool, name: string): MetaToolDefinition {
  const description = tool.title ? `${tool.title}. ${tool.description}` : tool.description;
  return { name, description, inputSchema: tool.inputSchema };
}
