/**
 * @module
 * `codecall search "<query>" [--limit N] [--regex] [--json]`: ranks the tools of the configured
 * MCP servers for a query, as the model's `search_tools` does: BM25 plus the tool graph learned
 * from the usage history (or a regex over names, descriptions and argument names), with the
 * reasons for each hit and the likely call chains.
 */
import { loadConfig, type CodecallConfig } from '../../config/index.js';
import { CodecallRuntime, type RuntimeSearchResult } from '../../execute/index.js';
import type { CatalogTool } from '../../tools/index.js';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../command.js';
import { configNoticeWriter } from '../config-notices.js';
import { neutralizeControls } from '../terminal-text.js';
import { canPrompt, ensureConfigTrusted } from '../trust.js';
import { searchHelp, DEFAULT_CLI_SEARCH_LIMIT } from './search.help.js';

/** Characters of a description shown under a hit. */
const DESCRIPTION_CHARS = 110;

/**
 * `config` reading its usage history from `path` (`--history`): that file only, never the
 * folder's shared one.
 */
export function withHistoryFile(config: CodecallConfig, path: string): CodecallConfig {
  return { ...config, history: { ...config.history, enabled: true, path, migrateFrom: undefined } };
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function renderPlain(query: string, result: RuntimeSearchResult, catalog: Map<string, CatalogTool>): string {
  const out: string[] = [];
  if (result.hits.length === 0) {
    out.push(`No tools match ${JSON.stringify(query)}. Try other words, fewer words, or --regex.`);
  }
  const width = Math.max(0, ...result.hits.map((h) => h.name.length));
  result.hits.forEach((hit, i) => {
    const tool = catalog.get(hit.name);
    out.push(`${String(i + 1).padStart(2)}. ${hit.name.padEnd(width)}  ${hit.score.toFixed(3)}`);
    if (tool?.description) out.push(`    ${oneLine(tool.description, DESCRIPTION_CHARS)}`);
    for (const reason of hit.reasons) out.push(`    · ${reason}`);
  });
  if (result.chains.length > 0) {
    out.push('', 'Likely chains:');
    for (const chain of result.chains) out.push(`  ${chain.tools.join(' → ')}  (${chain.score.toFixed(3)})`);
  }
  if (result.truncated)
    out.push('', 'The regex search ran out of time: results are partial. Use a more specific pattern.');
  return `${out.join('\n')}\n`;
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args: argv,
    options: {
      limit: { type: 'string' },
      regex: { type: 'boolean' },
      json: { type: 'boolean' },
      config: { type: 'string' },
      history: { type: 'string' },
    },
    allowPositionals: true,
  });
  if (positionals.length === 0)
    throw new UsageError('give a query, e.g. codecall search "send a slack message".');
  const query = positionals.join(' ');
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1)
      throw new UsageError(`--limit must be a positive integer; got "${values.limit}".`);
  }
  await ensureConfigTrusted(io, { config: values.config, interactive: canPrompt(io) });
  const loaded = await loadConfig({
    ...(values.config !== undefined ? { path: values.config } : {}),
    cwd: io.cwd,
    env: io.env,
    onNotice: configNoticeWriter(io),
  });
  const config = values.history !== undefined ? withHistoryFile(loaded, values.history) : loaded;
  // The one root, with only what a query needs: the servers' catalog and the history read (never
  // created); no sandbox. With search.embeddings configured, the query runs where the embedder
  // does (the search worker) and the embedding ranking is fused in.
  const runtime = await CodecallRuntime.open({
    config,
    parts: { sandbox: 'lazy' },
    history: 'read-only',
    searchWorker: config.search.embeddings !== undefined,
  });
  try {
    const result = await runtime.findTools(query, {
      limit: limit ?? config.search.limit ?? DEFAULT_CLI_SEARCH_LIMIT,
      regex: values.regex === true,
    });
    if (result.embeddingError !== undefined) {
      io.stderr.write(
        neutralizeControls(
          `codecall search: the embedder failed (${result.embeddingError}); hits are lexical + graph only.\n`,
        ),
      );
    }
    const failed = runtime.tools.serverStatus().filter((s) => s.state !== 'connected');
    for (const server of failed) {
      io.stderr.write(
        neutralizeControls(
          `codecall search: server "${server.name}" is ${server.state}; its tools are not searched.\n`,
        ),
      );
    }
    const catalog = new Map(runtime.catalog().map((t) => [t.name, t]));
    if (values.json) {
      const hits = result.hits.map(({ tool: _tool, ...h }) => {
        const tool = catalog.get(h.name);
        return {
          ...h,
          server: tool?.server,
          description: tool?.description,
          allowedCallers: tool?.allowedCallers,
        };
      });
      io.stdout.write(
        `${JSON.stringify({ query, hits, chains: result.chains, truncated: result.truncated }, null, 2)}\n`,
      );
    } else {
      // Tool names and descriptions come from MCP servers: no raw control sequences.
      io.stdout.write(neutralizeControls(renderPlain(query, result, catalog)));
    }
    return failed.length > 0 ? 1 : 0;
  } finally {
    await runtime.close();
  }
}

/** `codecall search`. */
export const searchCommand: CliCommand = {
  ...searchHelp,
  run,
};
