/**
 * `kill -9` of `codecall serve --http` under steady traffic loses no acknowledged run's history.
 * Each iteration starts a real server (the built bin, `npm run build` first) over an upstream MCP
 * server of {@link ID_TOOLS} tools (served from this process over Streamable HTTP, so it outlives
 * the kills), with its usage history in a fresh temp folder. {@link LANES} clients, one MCP
 * session each, send back-to-back `search_tools` (query `run <id>`) then `execute_code` whose
 * script calls two tools that spell the run's id (`t<id / 64>` then `t<id % 64>`). As a random
 * answer (the 10th to the 59th) reaches its client, on that same turn, the server and its sandbox
 * workers get SIGKILL: the moment that loses a write acknowledged before it was committed. The
 * history file is then reopened and every run whose `execute_code` result a client received is
 * looked up: its call sequence (in `runs`) and its query feedback (in `usages`).
 *
 * Figures: acknowledged runs whose history is missing, over all iterations (target 0); runs
 * acknowledged, runs per second of traffic; and, for the group commit of the SQLite store,
 * appends per second with {@link LANES} concurrent writers (their writes share commits) against
 * one writer at a time (one commit per write, as every write was before group commit).
 * `HISTORY_CRASH_ITERATIONS=<n>` changes the number of kills (default 50); `HISTORY_CRASH_BIN`
 * names another build's `bin/codecall.js` to kill instead (to measure an older commit).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { SqliteHistoryStore } from '../src/store/sqlite-history-store.js';
import { serveHttp } from '../src/testing/servers/serve-http.js';
import { figure, finish, hasBuild, nowUs, skip } from './harness.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const BIN = process.env.HISTORY_CRASH_BIN ?? join(ROOT, 'bin', 'codecall.js');
const ITERATIONS = Number(process.env.HISTORY_CRASH_ITERATIONS ?? 50);
/** Tools of the upstream server; two calls spell one of ID_TOOLS² run ids. */
const ID_TOOLS = 64;
const MAX_RUNS_PER_ITERATION = ID_TOOLS * ID_TOOLS;
/** Concurrent clients (one MCP session each), each with one request in flight. */
const LANES = 8;
/** The kill comes as the k-th answer reaches its client, k uniform in [MIN, MIN + SPAN). */
const MIN_ACKED_BEFORE_KILL = 10;
const KILL_ACK_SPAN = 50;
const SERVE_START_TIMEOUT_MS = 60_000;
/** Iterations between progress lines. */
const PROGRESS_EVERY = 10;
/** Appends of the store-level group commit figure. */
const STORE_APPENDS = 2_000;

/** An MCP server of tools `t0`…`t63` that answer at once. */
function createIdServer(): McpServer {
  const server = new McpServer({ name: 'ids', version: '1.0.0' });
  for (let i = 0; i < ID_TOOLS; i++)
    server.registerTool(`t${i}`, { description: `Digit ${i} of a run id.`, inputSchema: {} }, () => ({
      content: [{ type: 'text', text: 'ok' }],
    }));
  return server;
}

/** The sequence a run of id `id` records. */
function sequenceOf(id: number): string {
  return JSON.stringify([`ids.t${Math.floor(id / ID_TOOLS)}`, `ids.t${id % ID_TOOLS}`]);
}

/** Every live descendant pid of `pid` (Linux /proc). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Exited while we read.
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

function killHard(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}

interface IterationResult {
  acked: number;
  lostSequences: number;
  lostUsages: number;
  /** Acknowledged runs missing either. */
  lostRuns: number;
  trafficMs: number;
}

async function iteration(dir: string, upstreamUrl: string, index: number): Promise<IterationResult> {
  const historyPath = join(dir, `history-${index}.sqlite`);
  const configPath = join(dir, `codecall-${index}.json`);
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: { ids: { url: upstreamUrl } },
      sandbox: { cpuTimeMs: 2_000, wallTimeMs: 30_000, memoryMb: 64 },
      history: { path: historyPath },
      serve: { waitForServersMs: SERVE_START_TIMEOUT_MS },
    }),
  );
  // Its own process group: one kill(2) takes the server and everything it started at once.
  const launcher = spawn(process.execPath, [BIN, 'serve', '--http', '--port', '0', '--config', configPath], {
    stdio: ['ignore', 'ignore', 'pipe'],
    detached: true,
  });
  const exited = new Promise<void>((resolveExit) => launcher.once('exit', () => resolveExit()));
  let stderr = '';
  const clients: Client[] = [];
  const acked: number[] = [];
  let trafficMs = 0;
  try {
    const url = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`codecall serve did not start:\n${stderr}`)),
        SERVE_START_TIMEOUT_MS,
      );
      launcher.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        const match = /listening on (http:\/\/\S+)/.exec(stderr);
        if (match) {
          clearTimeout(timer);
          resolveUrl(match[1]!);
        }
      });
      launcher.once('exit', () => reject(new Error(`codecall serve exited:\n${stderr}`)));
    });
    for (let i = 0; i < LANES; i++) {
      const client = new Client({ name: `crash-${i}`, version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      clients.push(client);
    }
    let next = 0;
    let killed = false;
    const killAt = MIN_ACKED_BEFORE_KILL + Math.floor(Math.random() * KILL_ACK_SPAN);
    let crashed!: () => void;
    const crash = new Promise<void>((resolveCrash) => (crashed = resolveCrash));
    const started = nowUs();
    // Found before the kill (once the server is gone its children are init's), in case one left
    // the group; the group kill comes first, so nothing delays the crash.
    const tree = descendants(launcher.pid!);
    const kill = (): void => {
      killed = true;
      killHard([-launcher.pid!, launcher.pid!, ...tree]);
      trafficMs = (nowUs() - started) / 1_000;
      crashed();
    };
    const lanes = clients.map(async (client) => {
      while (!killed && next < MAX_RUNS_PER_ITERATION) {
        const id = next++;
        try {
          await client.callTool({ name: 'search_tools', arguments: { query: `run ${id}` } });
          const result = (await client.callTool({
            name: 'execute_code',
            arguments: {
              code: `await tools.ids.t${Math.floor(id / ID_TOOLS)}({}); await tools.ids.t${id % ID_TOOLS}({}); console.log('run ${id}');`,
            },
          })) as CallToolResult;
          const text = result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
          if (result.isError || !text.includes(`run ${id}`)) throw new Error(`run ${id} failed: ${text}`);
          acked.push(id);
          // At once, on the answer's own turn: the worst moment for a write still in flight.
          if (acked.length === killAt) kill();
        } catch (error) {
          // After the kill every request fails; before it, a failure is the bench's.
          if (!killed) throw error;
          return;
        }
      }
    });
    const laneFailure = Promise.all(lanes).then(() => {
      if (!killed) throw new Error(`the lanes stopped before the kill (${next} runs sent)`);
    });
    await Promise.race([crash, laneFailure]);
    // Requests in flight at the kill fail when their client closes (the client would otherwise
    // try to resume their streams until its request timeout).
    await Promise.allSettled(clients.map((client) => client.close()));
    await Promise.allSettled(lanes);
    await exited;
  } finally {
    if (launcher.exitCode === null && launcher.signalCode === null) killHard([-launcher.pid!, launcher.pid!]);
    await exited;
    await Promise.allSettled(clients.map((client) => client.close()));
  }
  // Reopened as codecall opens it (a partial transaction is rolled back), then read.
  const store = await SqliteHistoryStore.open({ path: historyPath });
  await store.close();
  const db = new DatabaseSync(historyPath, { readOnly: true });
  let sequences: Set<string>;
  let queries: Set<string>;
  try {
    sequences = new Set(
      db
        .prepare('SELECT tools FROM runs')
        .all()
        .map((row) => String(row.tools)),
    );
    queries = new Set(
      db
        .prepare('SELECT query FROM usages')
        .all()
        .map((row) => String(row.query)),
    );
  } finally {
    db.close();
  }
  return {
    acked: acked.length,
    lostSequences: acked.filter((id) => !sequences.has(sequenceOf(id))).length,
    lostUsages: acked.filter((id) => !queries.has(`run ${id}`)).length,
    lostRuns: acked.filter((id) => !sequences.has(sequenceOf(id)) || !queries.has(`run ${id}`)).length,
    trafficMs,
  };
}

/** Appends per second into a fresh store with `writers` concurrent appenders. */
async function appendsPerSecond(dir: string, writers: number): Promise<number> {
  const store = await SqliteHistoryStore.open({ path: join(dir, `appends-${writers}.sqlite`) });
  try {
    let next = 0;
    const started = nowUs();
    await Promise.all(
      Array.from({ length: writers }, async () => {
        while (next < STORE_APPENDS) {
          const id = next++;
          await store.appendSequence([`s.t${id % 97}`, `s.t${id % 89}`]);
        }
      }),
    );
    return STORE_APPENDS / ((nowUs() - started) / 1e6);
  } finally {
    await store.close();
  }
}

async function main(): Promise<void> {
  if (process.env.HISTORY_CRASH_BIN === undefined && !hasBuild(ROOT, ['cli/main.js'])) {
    finish();
    return;
  }
  if (!existsSync('/proc/self/stat')) {
    skip('needs /proc to find the server’s sandbox workers (Linux)');
    finish();
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'codecall-history-crash-'));
  const upstream = await serveHttp(createIdServer);
  try {
    console.log(
      `kill -9 of codecall serve --http under ${LANES} concurrent clients (search_tools + execute_code each), ` +
        `${ITERATIONS} iterations, each killed as a random answer (the ${MIN_ACKED_BEFORE_KILL}th to the ${MIN_ACKED_BEFORE_KILL + KILL_ACK_SPAN - 1}th) reaches its client`,
    );
    let acked = 0;
    let lostSequences = 0;
    let lostUsages = 0;
    let lostRuns = 0;
    let trafficMs = 0;
    const loads: number[] = [];
    for (let i = 0; i < ITERATIONS; i++) {
      const result = await iteration(dir, upstream.url, i);
      acked += result.acked;
      lostSequences += result.lostSequences;
      lostUsages += result.lostUsages;
      lostRuns += result.lostRuns;
      trafficMs += result.trafficMs;
      loads.push(loadavg()[0]!);
      if ((i + 1) % PROGRESS_EVERY === 0)
        console.log(`  after ${i + 1} kills: ${acked} runs acknowledged, ${lostRuns} missing history`);
      if (result.lostSequences + result.lostUsages > 0)
        console.log(
          `  iteration ${i}: ${result.acked} acknowledged, ${result.lostSequences} sequences and ${result.lostUsages} query feedbacks missing`,
        );
    }
    figure('runs acknowledged before the kills (all iterations)', acked, 'runs');
    figure('acknowledged runs per second of traffic', acked / (trafficMs / 1_000), 'runs/s');
    figure('acknowledged runs missing their call sequence', lostSequences, 'runs', { max: 0 });
    figure('acknowledged runs missing their query feedback', lostUsages, 'runs', { max: 0 });
    figure('acknowledged runs missing any of their history', lostRuns, 'runs', { max: 0 });
    figure('load average (1 min) over the iterations, lowest', Math.min(...loads), '');
    figure('load average (1 min) over the iterations, highest', Math.max(...loads), '');
    const grouped = await appendsPerSecond(dir, LANES);
    const single = await appendsPerSecond(dir, 1);
    figure(`store appends/s, ${LANES} concurrent writers (group commit)`, grouped, '/s');
    figure('store appends/s, one writer at a time (one commit per append)', single, '/s');
  } finally {
    await upstream.close();
    rmSync(dir, { recursive: true, force: true });
  }
  finish();
}

await main();
