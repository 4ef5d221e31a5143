/**
 * @module
 * The tool graph as Graphviz DOT text: what `codecall graph --format dot` prints and what
 * `--format svg` lays out. Tool names come from MCP servers, so none is ever DOT syntax: each
 * node has an id of codecall's own (`t0`, `t1`, …) and the name only as its quoted label, escaped
 * by {@link dotLabel} so that it cannot end the string, add statements or attributes, or be read
 * by Graphviz as an escape (`\N`, `\l`) or an entity (`&amp;`), and holds no character an SVG
 * (XML) file may not carry.
 */
import {
  DEFAULT_GRAPH_DETAILED_LAYOUT_MAX_EDGES,
  DEFAULT_GRAPH_LABEL_MAX_CHARS,
} from '../config/defaults.js';
import type { ToolGraphEdge } from '../search/index.js';
import { neutralizeControls } from './terminal-text.js';

/**
 * What XML 1.0 forbids even as a reference and UTF-8 cannot carry: lone surrogates (half of a
 * pair) and the noncharacters U+FFFE and U+FFFF.
 */
const XML_FORBIDDEN =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]|[\uFFFE\uFFFF]/g;

/**
 * `text` as a DOT string (quotes included) that Graphviz shows as `text` itself: control and bidi
 * characters made visible (as on a terminal), a line break kept as one (`\n`), backslashes, quotes
 * and `&` escaped; cut to `maxChars` characters with "…".
 *
 * @example
 * ```ts
 * dotLabel('a "b" & \\N'); // '"a \\"b\\" &amp; \\\\N"'
 * ```
 */
export function dotLabel(text: string, maxChars: number = DEFAULT_GRAPH_LABEL_MAX_CHARS): string {
  const chars = [...text.replace(XML_FORBIDDEN, '\uFFFD')];
  const cut = chars.length > maxChars ? `${chars.slice(0, maxChars - 1).join('')}…` : chars.join('');
  const visible = neutralizeControls(cut).replaceAll('\r\n', '\n');
  const escaped = visible
    .replaceAll('\\', '\\\\')
    .replaceAll('"', '\\"')
    .replaceAll('&', '&amp;')
    .replaceAll('\n', '\\n');
  return `"${escaped}"`;
}

/**
 * Graph attributes of a graph over {@link DEFAULT_GRAPH_DETAILED_LAYOUT_MAX_EDGES} edges: Graphviz's
 * crossing minimisation and network simplex bounded, straight edges.
 */
const BOUNDED_LAYOUT = '  graph [mclimit=0.3, nslimit=2, nslimit1=2, searchsize=10, splines=line];';

/**
 * The graph of `edges` in DOT: left to right, one box per tool, an edge's label from
 * `edgeLabel`; observed edges drawn thicker the likelier they are, inferred ones dashed. Over
 * {@link DEFAULT_GRAPH_DETAILED_LAYOUT_MAX_EDGES} edges, a layout bounded in time.
 *
 * @example
 * ```ts
 * renderDot(edges, (e) => String(e.count)); // 'digraph codecall {\n  rankdir=LR;\n …'
 * ```
 */
export function renderDot(
  edges: readonly ToolGraphEdge[],
  edgeLabel: (edge: ToolGraphEdge) => string,
): string {
  const ids = new Map<string, string>();
  const nodes: string[] = [];
  const id = (name: string): string => {
    let value = ids.get(name);
    if (value === undefined) {
      ids.set(name, (value = `t${ids.size}`));
      nodes.push(`  ${value} [label=${dotLabel(name)}];`);
    }
    return value;
  };
  const lines: string[] = [];
  for (const e of edges) {
    const from = id(e.from);
    const to = id(e.to);
    const style = e.kind === 'observed' ? `penwidth=${(1 + 3 * e.probability).toFixed(2)}` : 'style=dashed';
    lines.push(`  ${from} -> ${to} [label=${dotLabel(edgeLabel(e))}, ${style}];`);
  }
  return [
    'digraph codecall {',
    '  rankdir=LR;',
    // Room around the name: a viewer's sans-serif may be wider than the metrics Graphviz lays out with.
    '  node [shape=box, style=rounded, fontname="Helvetica", margin="0.2,0.08"];',
    '  edge [fontname="Helvetica", fontsize=10];',
    ...(edges.length > DEFAULT_GRAPH_DETAILED_LAYOUT_MAX_EDGES ? [BOUNDED_LAYOUT] : []),
    ...nodes,
    ...lines,
    '}',
    '',
  ].join('\n');
}
