/**
 * @module
 * One composition root: the parts of codecall's host (MCP tool pool, sandbox pool, executor, tool
 * search, search worker, usage-history store) are put together in one place,
 * `src/execute/codecall-runtime.ts`. Every other entry point (the CLI commands, `serve`, the agent,
 * the jobs worker) builds through `CodecallRuntime.open`, so a configuration
 * option the root applies is applied everywhere. Read from the source, like the layering test.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');
const ROOT = 'execute/codecall-runtime.ts';

/** Each builder of a part, and the folder that defines it (which may use it internally). */
const BUILDERS: ReadonlyArray<{ name: string; home: string }> = [
  { name: 'ToolPool.open', home: 'tools' },
  { name: 'SandboxPool.open', home: 'isolate' },
  { name: 'createExecutor', home: 'execute/executor.ts' },
  { name: 'createToolSearch', home: 'search' },
  { name: 'SearchWorkerHost.open', home: 'execute/search-host.ts' },
  { name: 'SqliteHistoryStore.open', home: 'store' },
];

/**
 * Files allowed one builder outside the root, with the reason. `codecall approvals` reads the
 * approval audit trail of a history file; it opens no tools, sandbox or search. The search
 * worker thread builds its own copy of the index, started by the root's `SearchWorkerHost`. A
 * vendor endpoint's tool search ranks the tools one request brought (the client's deferred
 * tools, not the catalog), so it builds a small index of its own per request.
 */
const EXEMPT: Record<string, string> = {
  'cli/commands/approvals.ts': 'SqliteHistoryStore.open',
  'execute/search-worker.ts': 'createToolSearch',
  'vendor-api/client-tool-search.ts': 'createToolSearch',
};

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? files(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/** Code without comments (TSDoc examples name the builders). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** The builders `text` (the file at `path`, relative to src/) calls outside the root. */
function strayBuilders(path: string, text: string): string[] {
  if (path === ROOT) return [];
  const body = code(text);
  return BUILDERS.filter(
    ({ name, home }) =>
      !(path === home || path.startsWith(`${home}/`)) &&
      EXEMPT[path] !== name &&
      new RegExp(`\\b${name.replace('.', '\\.')}\\(`).test(body),
  ).map(({ name }) => `${path}: ${name}`);
}

describe('one composition root', () => {
  it('finds a command that assembles its own stack (negative fixture)', () => {
    // What `codecall search` did before it built through the root.
    const fixture = `
      const pool = await ToolPool.open(config);
      const search = createToolSearch({ tools: pool.catalog().map(searchable), state });
      // ToolPool.open( in a comment is not a call
    `;
    expect(strayBuilders('cli/commands/search.ts', fixture)).toEqual([
      'cli/commands/search.ts: ToolPool.open',
      'cli/commands/search.ts: createToolSearch',
    ]);
    expect(strayBuilders(ROOT, fixture)).toEqual([]);
    expect(strayBuilders('tools/tool-pool.ts', 'ToolPool.open(config)')).toEqual([]);
  });

  it('no file but the root puts the host together (CLI search, graph, tools, exec, serve, agent, jobs)', () => {
    const offenders = files(SRC).flatMap((file) =>
      strayBuilders(relative(SRC, file).split(sep).join('/'), readFileSync(file, 'utf8')),
    );
    expect(offenders).toEqual([]);
  });
});
