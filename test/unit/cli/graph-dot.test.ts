/**
 * The tool graph in DOT (`codecall graph --format dot`, the input of `--format svg`): tool names
 * from MCP servers are labels only, escaped so that none is DOT syntax, a Graphviz escape or
 * entity, or a character an SVG file may not carry. Graphviz itself reads the output in
 * test/e2e/cli-graph-svg.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_GRAPH_DETAILED_LAYOUT_MAX_EDGES,
  DEFAULT_GRAPH_LABEL_MAX_CHARS,
} from '../../../src/config/defaults.js';
import { dotLabel, renderDot } from '../../../src/cli/graph-dot.js';
import type { ToolGraphEdge } from '../../../src/search/index.js';

const edge = (from: string, to: string, count: number, probability: number): ToolGraphEdge =>
  ({ from, to, count, probability, weight: probability, kind: 'observed' }) as ToolGraphEdge;

describe('DOT labels', () => {
  it('escape what DOT and Graphviz read: quotes, backslashes (\\N, \\l), entities, line breaks', () => {
    expect(dotLabel('plain.name')).toBe('"plain.name"');
    expect(dotLabel('a "b"')).toBe('"a \\"b\\""');
    expect(dotLabel('ends with \\')).toBe('"ends with \\\\"');
    expect(dotLabel('\\N\\G\\l')).toBe('"\\\\N\\\\G\\\\l"');
    expect(dotLabel('x &amp; y & z')).toBe('"x &amp;amp; y &amp; z"');
    expect(dotLabel('one\ntwo\r\nthree')).toBe('"one\\ntwo\\nthree"');
    expect(dotLabel('<b>html?</b>')).toBe('"<b>html?</b>"');
  });

  it('show control and bidi characters, and replace what XML cannot carry', () => {
    expect(dotLabel('bell\u0007 esc\u001b[2J cr\r nul\u0000')).toBe('"bell␇ esc␛[2J cr␍ nul␀"');
    expect(dotLabel('rtl\u202eevil')).toBe('"rtl\\\\u202eevil"');
    expect(dotLabel('lone \ud800 and \udc00, pair 😀, \uffff')).toBe(
      '"lone \ufffd and \ufffd, pair 😀, \ufffd"',
    );
  });

  it('cut a long name with "…" at the label limit, counting characters, not UTF-16 units', () => {
    const long = '😀'.repeat(DEFAULT_GRAPH_LABEL_MAX_CHARS + 5);
    expect(dotLabel(long)).toBe(`"${'😀'.repeat(DEFAULT_GRAPH_LABEL_MAX_CHARS - 1)}…"`);
    expect(dotLabel('😀'.repeat(DEFAULT_GRAPH_LABEL_MAX_CHARS))).toBe(
      `"${'😀'.repeat(DEFAULT_GRAPH_LABEL_MAX_CHARS)}"`,
    );
    expect(dotLabel('abcdef', 4)).toBe('"abc…"');
  });
});

describe('renderDot', () => {
  it('names nodes t0, t1, … with the tool names as labels only', () => {
    const hostile = 'x"]; evil [label="pwned';
    const dot = renderDot([edge('s.a', hostile, 2, 0.5), edge(hostile, 's.a', 1, 1)], (e) => String(e.count));
    expect(dot).toBe(
      [
        'digraph codecall {',
        '  rankdir=LR;',
        '  node [shape=box, style=rounded, fontname="Helvetica", margin="0.2,0.08"];',
        '  edge [fontname="Helvetica", fontsize=10];',
        '  t0 [label="s.a"];',
        '  t1 [label="x\\"]; evil [label=\\"pwned"];',
        '  t0 -> t1 [label="2", penwidth=2.50];',
        '  t1 -> t0 [label="1", penwidth=4.00];',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('bounds the layout of a large graph (Graphviz time grows steeply with edges otherwise)', () => {
    const bounded = '  graph [mclimit=0.3, nslimit=2, nslimit1=2, searchsize=10, splines=line];\n';
    const edges = (n: number): ToolGraphEdge[] =>
      Array.from({ length: n }, (_, i) => edge(`s.t${i % 40}`, `s.t${(i * 7 + 1) % 40}`, 1, 0.1));
    expect(renderDot(edges(DEFAULT_GRAPH_DETAILED_LAYOUT_MAX_EDGES), String)).not.toContain('mclimit');
    const large = renderDot(edges(DEFAULT_GRAPH_DETAILED_LAYOUT_MAX_EDGES + 1), String);
    expect(large).toContain(`  edge [fontname="Helvetica", fontsize=10];\n${bounded}  t0 [label="s.t0"];`);
  });
});
