/**
 * @module
 * `codecall graph [--format text|mermaid|dot|json] [--min-count N]`: what tool search learned
 * from usage: the tool graph's observed edges (runs in which one tool was called right after
 * another, with the probability `count / Σ count`), and with `--inferred` the cold-start edges the
 * schemas of the configured servers imply.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/index.js';
import { createToolSearch, type ToolGraphEdge } from '../../search/tool-search.js';
import { ToolPool } from '../../tools/index.js';
import { UsageError, type CliCommand, type CliIo } from '../command.js';
import { configNoticeWriter } from '../config-notices.js';
import { neutralizeControls } from '../terminal-text.js';
import { readHistory } from './search.js';
import { graphHelp, DEFAULT_GRAPH_EDGE_LIMIT } from './graph.help.js';

const FORMATS = ['text', 'mermaid', 'dot', 'json'] as const;
type Format = (typeof FORMATS)[number];

function percent(p: number): string {
  return `${Math.round(p * 100)}%`;
}

function quote(text: string): string {
  return JSON.stringify(text);
}

function render(format: Format, edges: ToolGraphEdge[], sequences: number): string {
  if (format === 'json') return `${JSON.stringify({ sequences, edges }, null, 2)}\n`;
  const label = (e: ToolGraphEdge): string =>
    e.kind === 'observed' ? `${e.count} (${percent(e.probability)})` : 'inferred';
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
      lines.push(`  ${from}[${quote(e.from)}] ${arrow}|${quote(label(e))}| ${to}[${quote(e.to)}]`);
    }
    return `${lines.join('\n')}\n`;
  }
  if (format === 'dot') {
    const lines = ['digraph codecall {', '  rankdir=LR;', '  node [shape=box, fontname="Helvetica"];'];
    for (const e of edges) {
      const style = e.kind === 'observed' ? `penwidth=${(1 + 3 * e.probability).toFixed(2)}` : 'style=dashed';
      lines.push(`  ${quote(e.from)} -> ${quote(e.to)} [label=${quote(label(e))}, ${style}];`);
    }
    lines.push('}');
    return `${lines.join('\n')}\n`;
  }
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
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        format: { type: 'string' },
        'min-count': { type: 'string' },
        inferred: { type: 'boolean' },
        limit: { type: 'string' },
        config: { type: 'string' },
        history: { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const format = (values.format ?? 'text') as Format;
  if (!FORMATS.includes(format))
    throw new UsageError(`--format must be one of ${FORMATS.join(', ')}; got "${format}".`);
  const integer = (flag: string, fallback: number, min: number): number => {
    const raw = values[flag] as string | undefined;
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min)
      throw new UsageError(`--${flag} must be an integer ≥ ${min}; got "${raw}".`);
    return n;
  };
  const minCount = integer('min-count', 1, 1);
  const limit = integer('limit', DEFAULT_GRAPH_EDGE_LIMIT, 1);

  let historyPath = values.history as string | undefined;
  const needConfig = historyPath === undefined || values.inferred === true;
  const config = needConfig
    ? await loadConfig({
        ...(values.config !== undefined ? { path: values.config as string } : {}),
        cwd: io.cwd,
        env: io.env,
        onNotice: configNoticeWriter(io),
      })
    : undefined;
  // Whose history this is: the configuration's own file (kept per configuration) or a path given.
  let historyKey = historyPath !== undefined ? '--history' : undefined;
  if (historyPath === undefined && config) {
    if (!config.history.enabled) {
      io.stderr.write(
        'codecall graph: usage history is disabled in the configuration (history.enabled: false).\n',
      );
    } else {
      historyPath = config.history.path;
      historyKey = config.history.key;
      // Not yet written for this configuration: its history starts from the folder's shared store.
      const shared = config.history.migrateFrom;
      if (!existsSync(historyPath) && shared !== undefined && existsSync(shared)) {
        historyPath = shared;
        historyKey = `${config.history.key}, not yet written: the folder's shared history it will start from`;
      }
    }
  }
  const state = historyPath !== undefined ? await readHistory(historyPath) : undefined;
  if (historyPath !== undefined && state === undefined) {
    io.stderr.write(`codecall graph: no usage history at ${historyPath} yet.\n`);
  } else if (historyPath !== undefined && state !== undefined) {
    io.stderr.write(
      `codecall graph: usage history ${historyPath} (key: ${historyKey}; ${state.sequences} recorded runs). ` +
        'Each configuration file keeps its own unless history.path or CODECALL_HISTORY_PATH points several at one file.\n',
    );
  }

  let pool: ToolPool | undefined;
  try {
    let tools: Parameters<typeof createToolSearch>[0]['tools'] = [];
    if (values.inferred && config) {
      pool = await ToolPool.open(config);
      tools = pool.catalog().map((t) => ({
        name: t.name,
        server: t.server,
        description: t.description,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
      }));
    }
    const { limit: _limit, ...ranking } = config?.search ?? {};
    const search = createToolSearch({ tools, state, ...ranking });
    let edges = search.graphEdges({ minCount, includeInferred: values.inferred === true });
    if (edges.length > limit) {
      io.stderr.write(
        `codecall graph: showing the ${limit} strongest of ${edges.length} edges (raise --limit for more).\n`,
      );
      edges = [...edges].sort((a, b) => b.count - a.count || b.weight - a.weight).slice(0, limit);
    }
    const rendered = render(format, edges, state?.sequences ?? 0);
    // Tool names come from MCP servers: human formats show their control characters, JSON stays exact.
    io.stdout.write(format === 'json' ? rendered : neutralizeControls(rendered));
    return 0;
  } finally {
    await pool?.close();
  }
}

/** `codecall graph`. */
export const graphCommand: CliCommand = {
  ...graphHelp,
  run,
};
