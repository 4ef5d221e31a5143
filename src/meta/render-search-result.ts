/**
 * @module
 * Renders a tool-search result as the text the model reads from `search_tools`: the ranked
 * tools (qualified name, how to call it, why it ranks here), the likely call sequences from the
 * tool graph, and the TypeScript declarations of the tools code may call.
 */
import type { RuntimeSearchResult } from '../execute/index.js';
import type { CatalogTool } from '../tools/index.js';

/** Characters of a tool description shown next to a hit (the declarations carry the rest). */
const HIT_DESCRIPTION_MAX_CHARS = 200;
/** Likely call sequences shown. */
const MAX_CHAINS_SHOWN = 3;

/** Options of {@link renderSearchResult}. */
export interface RenderSearchResultOptions {
  /** The query, echoed in the heading. */
  query: string;
  /** The name under which the model may call a tool directly, if it may. */
  directName?: (tool: CatalogTool) => string | undefined;
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > HIT_DESCRIPTION_MAX_CHARS ? `${line.slice(0, HIT_DESCRIPTION_MAX_CHARS)}…` : line;
}

function howToCall(tool: CatalogTool, directName: string | undefined): string {
  if (tool.allowedCallers.includes('code_execution'))
    return `in execute_code: await tools.${tool.namespace}.${tool.member}(args)`;
  if (directName !== undefined) return `not callable from code; call the tool "${directName}" directly`;
  return 'not callable from code (allowedCallers), and not open to you here';
}

/**
 * The `search_tools` text for one result.
 *
 * @example
 * ```ts
 * const text = renderSearchResult(runtime.searchTools('team expenses'), { query: 'team expenses' });
 * ```
 */
export function renderSearchResult(result: RuntimeSearchResult, options: RenderSearchResultOptions): string {
  if (result.hits.length === 0) {
    return [
      `No tools match ${JSON.stringify(options.query)}.`,
      'Try other or fewer words, a tool or server name, or regex: true with a pattern.',
      ...(result.truncated ? ['(The regex search ran out of time; try a simpler pattern.)'] : []),
    ].join('\n');
  }
  const count = result.hits.length;
  const lines: string[] = [
    `${count} tool${count === 1 ? '' : 's'} for ${JSON.stringify(options.query)}, best first:`,
    '',
  ];
  result.hits.forEach((hit, index) => {
    const tool = hit.tool;
    lines.push(`${index + 1}. ${tool.name}: ${howToCall(tool, options.directName?.(tool))}`);
    const description = firstLine(tool.description);
    if (description !== '') lines.push(`   ${description}`);
    if (hit.reasons.length > 0) lines.push(`   why: ${hit.reasons.join('; ')}`);
  });
  if (result.truncated) lines.push('', '(The regex search ran out of time; these hits may be partial.)');
  const chains = result.chains.slice(0, MAX_CHAINS_SHOWN);
  if (chains.length > 0) {
    lines.push('', 'Usually called in this order:');
    for (const chain of chains) lines.push(`- ${chain.tools.join(' → ')}`);
  }
  if (result.declarations !== '') {
    lines.push('', 'Declarations (for execute_code):', '```ts', result.declarations.trimEnd(), '```');
  }
  return lines.join('\n');
}
