/**
 * @module
 * `codecall search "<query>" [--limit N] [--regex] [--json]`: ranks the tools of the configured
 * MCP servers for a query, as the model's `search_tools` does: BM25 plus the tool graph learned
 * from the usage history (or a regex over names, descriptions and argument names), with the
 * reasons for each hit and the likely call chains.
 */
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../config/index.js';
import { openEmbeddings, type OpenedEmbeddings } from '../../search/open-embeddings.js';
import { SqliteHistoryStore } from '../../search/sqlite-history-store.js';
import { createToolSearch, type ToolSearchResult } from '../../search/tool-search.js';
import type { ToolSearchState } from '../../search/tool-graph.js';
import { ToolPool, type CatalogTool } from '../../tools/index.js';
import { UsageError, type CliCommand, type CliIo } from '../command.js';
import { configNoticeWriter } from '../config-notices.js';
import { neutralizeControls } from '../terminal-text.js';
import { canPrompt, ensureConfigTrusted } from '../trust.js';
import { searchHelp, DEFAULT_CLI_SEARCH_LIMIT } from './search.help.js';

/** Characters of a description shown under a hit. */
const DESCRIPTION_CHARS = 110;

/** Reads the usage history at `path` without creating it. */
export async function readHistory(path: string): Promise<ToolSearchState | undefined> {
  if (!existsSync(path)) return undefined;
  const store = await SqliteHistoryStore.open({ path });
  try {
    return await store.load();
  } finally {
    await store.close();
  }
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function renderPlain(query: string, result: ToolSearchResult, catalog: Map<string, CatalogTool>): string {
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
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
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
  const config = await loadConfig({
    ...(values.config !== undefined ? { path: values.config } : {}),
    cwd: io.cwd,
    env: io.env,
    onNotice: configNoticeWriter(io),
  });
  let historyPath = values.history ?? (config.history.enabled ? config.history.path : undefined);
  // A configuration whose own history is not written yet starts from the folder's shared one.
  const shared = config.history.migrateFrom;
  if (
    values.history === undefined &&
    historyPath !== undefined &&
    !existsSync(historyPath) &&
    shared !== undefined
  )
    historyPath = shared;
  const state = historyPath !== undefined ? await readHistory(historyPath) : undefined;
  const pool = await ToolPool.open(config);
  let embeddings: OpenedEmbeddings | undefined;
  try {
    const tools = pool.catalog();
    const { limit: configLimit, embeddings: embeddingsConfig, ...ranking } = config.search;
    // With search.embeddings configured, the embedding ranking is fused in (searchAsync).
    embeddings = embeddingsConfig ? await openEmbeddings(embeddingsConfig, config.configDir) : undefined;
    const search = createToolSearch({
      tools: tools.map((t) => ({
        name: t.name,
        server: t.server,
        description: t.title ? `${t.title}. ${t.description}` : t.description,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
      })),
      state,
      ...ranking,
      ...(embeddings ?? {}),
    });
    const result = await search.searchAsync(query, {
      limit: limit ?? configLimit ?? DEFAULT_CLI_SEARCH_LIMIT,
      mode: values.regex ? 'regex' : 'hybrid',
    });
    if (result.embeddingError !== undefined) {
      io.stderr.write(
        neutralizeControls(
          `codecall search: the embedder failed (${result.embeddingError}); hits are lexical + graph only.\n`,
        ),
      );
    }
    const failed = pool.serverStatus().filter((s) => s.state !== 'connected');
    for (const server of failed) {
      io.stderr.write(
        neutralizeControls(
          `codecall search: server "${server.name}" is ${server.state}; its tools are not searched.\n`,
        ),
      );
    }
    if (values.json) {
      const catalog = new Map(tools.map((t) => [t.name, t]));
      const hits = result.hits.map((h) => {
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
      io.stdout.write(neutralizeControls(renderPlain(query, result, new Map(tools.map((t) => [t.name, t])))));
    }
    return failed.length > 0 ? 1 : 0;
  } finally {
    await Promise.allSettled([pool.close(), embeddings?.close()]);
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      limit: { type: 'string' },
      regex: { type: 'boolean' },
      json: { type: 'boolean' },
      config: { type: 'string' },
      history: { type: 'string' },
    },
    strict: true,
    allowPositionals: true,
  });
}

/** `codecall search`. */
export const searchCommand: CliCommand = {
  ...searchHelp,
  run,
};
