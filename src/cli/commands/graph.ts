/**
 * @module
 * `codecall graph [--format text|mermaid|dot|svg|json] [--min-count N] [--out <file>]`: what tool
 * search learned from usage: the tool graph's observed edges (runs in which one tool was called
 * right after another, with the probability `count / Σ count`), and with `--inferred` the
 * cold-start edges the schemas of the configured servers imply. `svg` is drawn by Graphviz in
 * WebAssembly (the optional `@viz-js/viz`), no system Graphviz needed.
 */
import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { loadConfig, parseConfig } from '../../config/index.js';
import { CodecallRuntime } from '../../execute/index.js';
import type { ToolGraphEdge } from '../../search/index.js';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../command.js';
import { configNoticeWriter } from '../config-notices.js';
import { renderDot } from '../graph-dot.js';
import { loadGraphviz, renderSvg } from '../graph-svg.js';
import { neutralizeControls } from '../terminal-text.js';
import { withHistoryFile } from './search.js';
import { graphHelp, DEFAULT_GRAPH_EDGE_LIMIT } from './graph.help.js';

const FORMATS = ['text', 'mermaid', 'dot', 'svg', 'json'] as const;
type Format = (typeof FORMATS)[number];

function percent(p: number): string {
  return `${Math.round(p * 100)}%`;
}

function quote(text: string): string {
  return JSON.stringify(text);
}

function edgeLabel(e: ToolGraphEdge): string {
  return e.kind === 'observed' ? `${e.count} (${percent(e.probability)})` : 'inferred';
}

function render(format: Exclude<Format, 'svg'>, edges: ToolGraphEdge[], sequences: number): string {
  if (format === 'json') return `${JSON.stringify({ sequences, edges }, null, 2)}\n`;
  if (format === 'mermaid') {
    const ids = new Map<string, string>();
    const id = (name: string): string => {
      let value = ids.get(name);
      if (!value) ids.set(name, (value = `t${ids.size}`));
      return value;
    };
    const lines = ['graph LR'];
    for (const e of edges) {
      const from = id(e.from);
      const to = id(e.to);
      const arrow = e.kind === 'observed' ? '-->' : '-.->';
      lines.push(`  ${from}[${quote(e.from)}] ${arrow}|${quote(edgeLabel(e))}| ${to}[${quote(e.to)}]`);
    }
    return `${lines.join('\n')}\n`;
  }
  if (format === 'dot') return renderDot(edges, edgeLabel);
  if (edges.length === 0)
    return 'No edges yet: tool search learns them from runs (codecall exec, codecall run, serve).\n';
  const rows = [['from', 'to', 'runs', 'probability', 'weight', 'kind']];
  for (const e of edges) {
    rows.push([
      e.from,
      e.to,
      String(e.count),
      e.kind === 'observed' ? percent(e.probability) : '-',
      e.weight.toFixed(3),
      e.kind,
    ]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  const lines = rows.map((r) =>
    r
      .map((cell, c) => cell.padEnd(widths[c]!))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  return `${sequences} runs recorded\n\n${lines.join('\n')}\n`;
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { values } = parseCommandArgs({
    args: argv,
    options: {
      format: { type: 'string' },
      'min-count': { type: 'string' },
      inferred: { type: 'boolean' },
      limit: { type: 'string' },
      config: { type: 'string' },
      history: { type: 'string' },
      out: { type: 'string' },
    },
    allowPositionals: false,
  });
  const format = (values.format ?? 'text') as Format;
  if (!FORMATS.includes(format))
    throw new UsageError(`--format must be one of ${FORMATS.join(', ')}; got "${format}".`);
  const integer = (flag: 'min-count' | 'limit', fallback: number, min: number): number => {
    const raw = values[flag];
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new UsageError(`--${flag} must be an integer ≥ ${min}; got "${raw}".`);
    return n;
  };
  const minCount = integer('min-count', 1, 1);
  const limit = integer('limit', DEFAULT_GRAPH_EDGE_LIMIT, 1);
  const inferred = values.inferred === true;
  if (values.out === '') throw new UsageError('--out needs a file path: --out <file>.');
  // Before anything is read or started: without the package, the error names its install command.
  const graphviz = format === 'svg' ? await loadGraphviz() : undefined;

  // A history file given and no inferred edges wanted: no configuration is read (defaults rank).
  const needConfig = values.history === undefined || inferred;
  const loaded = needConfig
    ? await loadConfig({
        ...(values.config !== undefined ? { path: values.config } : {}),
        cwd: io.cwd,
        env: io.env,
        onNotice: configNoticeWriter(io),
      })
    : parseConfig({ mcpServers: {} }, { file: '--history', dir: io.cwd, env: io.env });
  const config = values.history !== undefined ? withHistoryFile(loaded, values.history) : loaded;
  if (!config.history.enabled)
    io.stderr.write(
      'codecall graph: usage history is disabled in the configuration (history.enabled: false).\n',
    );
  // The one root, with only what the graph needs: the history read (never created), the servers
  // only for the edges their schemas imply, no sandbox.
  const runtime = await CodecallRuntime.open({
    config,
    parts: { servers: inferred, sandbox: 'lazy' },
    history: 'read-only',
    searchWorker: false,
  });
  try {
    const state = runtime.search.serialize();
    const sequences = runtime.historyFile !== undefined ? state.sequences : 0;
    if (config.history.enabled) {
      // Whose history this is: the configuration's own file (kept per configuration) or a path given.
      const key = values.history !== undefined ? '--history' : config.history.key;
      if (runtime.historyFile === undefined) {
        io.stderr.write(`codecall graph: no usage history at ${config.history.path} yet.\n`);
      } else {
        const whose =
          runtime.historyFile === config.history.path
            ? key
            : `${key}, not yet written: the folder's shared history it will start from`;
        io.stderr.write(
          `codecall graph: usage history ${runtime.historyFile} (key: ${whose}; ${sequences} recorded runs). ` +
            'Each configuration file keeps its own unless history.path or CODECALL_HISTORY_PATH points several at one file.\n',
        );
      }
    }
    let edges = runtime.search.graphEdges({ minCount, includeInferred: inferred });
    if (edges.length > limit) {
      io.stderr.write(
        `codecall graph: showing the ${limit} strongest of ${edges.length} edges (raise --limit for more).\n`,
      );
      edges = [...edges].sort((a, b) => b.count - a.count || b.weight - a.weight).slice(0, limit);
    }
    // Tool names come from MCP servers: human formats show their control characters, JSON stays
    // exact, DOT and SVG escape each name where it is written (graph-dot.ts).
    const output =
      format === 'svg'
        ? renderSvg(graphviz!, renderDot(edges, edgeLabel))
        : format === 'json'
          ? render(format, edges, sequences)
          : neutralizeControls(render(format, edges, sequences));
    if (values.out === undefined) {
      io.stdout.write(output);
    } else {
      const file = resolve(io.cwd, values.out);
      await writeFile(file, output);
      io.stderr.write(
        `codecall graph: wrote the ${format} of ${edges.length} edge${edges.length === 1 ? '' : 's'} to ${neutralizeControls(file)}.\n`,
      );
    }
    return 0;
  } finally {
    await runtime.close();
  }
}

/** `codecall graph`. */
export const graphCommand: CliCommand = {
  ...graphHelp,
  run,
};
