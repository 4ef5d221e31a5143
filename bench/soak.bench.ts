/**
 * Soak of `codecall serve --http`: one real server process (the built bin, `npm run build`
 * first) over the example expense server, answering thousands of `execute_code` calls — normal
 * scripts mixed with throwing, infinite-loop, memory-hog, huge-output, syntax-error and
 * forbidden-tool scripts, scripts that flood the boundary (1 MB arguments in a loop, a 20 MB
 * tool name, `console.log` of a DAG of shared objects and of a 2M-item array, a 20 MB return
 * value), plus
 * `search_tools` — first sequentially, then concurrently from several sessions.
 *
 * Figures: every request answered with the expected kind of result (target: all); the server
 * (host) process's resident memory after every block of 200 runs, once it has settled (see
 * `settledRssMb`), as a ratio against its own level measured the same way after a warm-up in
 * the same run (target: every sample over the second half of the soak ≤ 1.1× that level); the
 * sandbox workers' resident memory, reported alongside.
 * `SOAK_RUNS=<n>` changes the number of measured runs (default 2,000).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { figure, finish, hasBuild, nowUs, percentile, skip } from './harness.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const WARMUP_SEQUENTIAL_CALLS = 100;
const WARMUP_CONCURRENT_CALLS = 300;
const MEASURED_CALLS = Number(process.env.SOAK_RUNS ?? 2_000);
const BLOCK_CALLS = 200;
const IN_FLIGHT = 8;
const SESSIONS = 4;
/** Idle time before the first sample of a block: past the server's idle collection (5 s). */
const SETTLE_MIN_MS = 10_000;
const SETTLE_MAX_MS = 30_000;

interface Kind {
  name: string;
  /** Share of calls, in a deterministic rotation. */
  weight: number;
  call: { name: string; arguments: Record<string, unknown> };
  /** True when the answer is the one this kind must get. */
  check: (result: CallToolResult, text: string) => boolean;
}

const KINDS: Kind[] = [
  {
    name: 'normal',
    weight: 10,
    call: {
      name: 'execute_code',
      arguments: {
        code: `const { members } = await tools.expenses.get_team_members();
               const { items } = await tools.expenses.get_expenses({ quarter: 'Q2', limit: 5000 });
               const total = items.reduce((s, i) => s + i.amount, 0);
               console.log(members.length, items.length, total > 0);`,
      },
    },
    check: (r, t) => !r.isError && /^stdout:\n20 \d+ true\n/.test(t),
  },
  {
    name: 'search',
    weight: 2,
    call: { name: 'search_tools', arguments: { query: 'expenses of a team member by quarter' } },
    check: (r, t) => !r.isError && t.includes('expenses.get_expenses'),
  },
  {
    name: 'throws',
    weight: 2,
    call: { name: 'execute_code', arguments: { code: 'console.log("a"); throw new Error("soak failure")' } },
    check: (r, t) => r.isError === true && t.includes('soak failure'),
  },
  {
    name: 'infinite loop',
    weight: 1,
    call: { name: 'execute_code', arguments: { code: 'while (true) {}' } },
    check: (r, t) => r.isError === true && /exit status: error/.test(t),
  },
  {
    name: 'memory hog',
    weight: 1,
    call: {
      name: 'execute_code',
      arguments: { code: 'const keep = []; for (;;) keep.push(new Array(100_000).fill(Math.random()));' },
    },
    check: (r, t) => r.isError === true && /exit status: error/.test(t),
  },
  {
    name: 'huge output',
    weight: 2,
    call: {
      name: 'execute_code',
      arguments: { code: 'for (let i = 0; i < 2000; i++) console.log("x".repeat(1000));' },
    },
    check: (_r, t) => t.length < 64_000 && /stdout:\nx{1000}/.test(t),
  },
  {
    name: 'syntax error',
    weight: 1,
    call: { name: 'execute_code', arguments: { code: 'const = ;' } },
    check: (r, t) => r.isError === true && t.includes('SYNTAX_ERROR'),
  },
  {
    name: 'forbidden tool',
    weight: 1,
    call: {
      name: 'execute_code',
      arguments: {
        code: `await tools.expenses.flag_expense({ expense_id: 'exp-00001', reason: 'soak test' })`,
      },
    },
    check: (r, t) => r.isError === true && t.includes('allowedCallers'),
  },
  {
    name: 'arguments flood',
    weight: 1,
    call: {
      name: 'execute_code',
      arguments: {
        code: `const pad = 'x'.repeat(1_000_000);
               const codes = await Promise.all(Array.from({ length: 6 }, () =>
                 tools.expenses.get_team_members({ pad }).then(() => 'ok', (error) => error.code)));
               console.log(codes.filter((code) => code === 'TOOL_ARGS_LIMIT').length > 0);`,
      },
    },
    check: (r, t) => !r.isError && /^stdout:\ntrue\n/.test(t),
  },
  {
    name: 'huge tool name',
    weight: 1,
    call: {
      name: 'execute_code',
      arguments: {
        code: `try { await callTool('x'.repeat(20_000_000), {}); } catch (error) { console.log(error.code, error.message.length < 500); }`,
      },
    },
    check: (r, t) => !r.isError && /^stdout:\nUNKNOWN_TOOL true\n/.test(t),
  },
  {
    name: 'console.log of a DAG',
    weight: 1,
    call: {
      name: 'execute_code',
      arguments: {
        code: `let node = { leaf: 1 };
               for (let depth = 0; depth < 8; depth++) {
                 const next = {};
                 for (let i = 0; i < 30; i++) next['k' + i] = node;
                 node = next;
               }
               console.log(node);`,
      },
    },
    check: (r, t) => !r.isError && t.length < 64_000 && t.includes('output truncated: formatter visited'),
  },
  {
    name: 'console.log of a 2M array',
    weight: 1,
    call: { name: 'execute_code', arguments: { code: 'console.log(new Array(2_000_000).fill(7));' } },
    check: (r, t) => !r.isError && t.includes('1999900 more items'),
  },
  {
    name: 'huge return value',
    weight: 1,
    call: { name: 'execute_code', arguments: { code: "return 'x'.repeat(20_000_000);" } },
    check: (_r, t) => t.length < 64_000 && t.includes('return value omitted'),
  },
];
const ROTATION = KINDS.flatMap((kind) => Array.from({ length: kind.weight }, () => kind));

function interleave(count: number, offset: number): Kind[] {
  // A fixed stride through the rotation mixes kinds without clustering them.
  return Array.from({ length: count }, (_, i) => ROTATION[((offset + i) * 7) % ROTATION.length]!);
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN);
  return kb / 1024;
}

function children(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      // Exited while we read.
    }
  }
  return out;
}

function treeRssMb(pid: number): number {
  let total = 0;
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    try {
      total += rssMb(next);
    } catch {
      continue;
    }
    queue.push(...children(next));
  }
  return total;
}

interface Tally {
  answered: number;
  wrong: { kind: string; text: string }[];
  failed: { kind: string; error: string }[];
  latencyUs: Map<string, number[]>;
}

async function callOne(client: Client, kind: Kind, tally: Tally): Promise<void> {
  const start = nowUs();
  try {
    const result = (await client.callTool(kind.call)) as CallToolResult;
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
    tally.answered++;
    if (!kind.check(result, text)) tally.wrong.push({ kind: kind.name, text: text.slice(0, 300) });
    const list = tally.latencyUs.get(kind.name) ?? [];
    list.push(nowUs() - start);
    tally.latencyUs.set(kind.name, list);
  } catch (error) {
    tally.failed.push({ kind: kind.name, error: String((error as Error)?.message ?? error) });
  }
}

function workerPids(server: number): number[] {
  return children(server).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('worker.js');
    } catch {
      return false;
    }
  });
}

function workersRssMb(server: number): number {
  let total = 0;
  for (const pid of workerPids(server)) {
    try {
      total += rssMb(pid);
    } catch {
      // Exited while we read (a worker replaced after a kill).
    }
  }
  return total;
}

/**
 * Resident memory of `pid` once it has settled after a block: what the block left behind, not
 * garbage the collector has yet to reclaim. V8 collects on allocation, so an idle heap keeps
 * whatever dead data the block's last seconds left (6–58 MB of large strings, measured) until
 * `codecall serve` runs its idle collection (`serve.idleCollectMs`, 5 s). Sampled every second
 * from {@link SETTLE_MIN_MS} on until two samples in a row differ by under 2 MB, for at most
 * {@link SETTLE_MAX_MS}.
 */
async function settledRssMb(pid: number): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MIN_MS));
  let last = rssMb(pid);
  for (let waited = SETTLE_MIN_MS; waited < SETTLE_MAX_MS; waited += 1_000) {
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const now = rssMb(pid);
    if (Math.abs(now - last) < 2) return now;
    last = now;
  }
  return last;
}

async function main(): Promise<void> {
  if (!hasBuild(ROOT, ['cli/main.js'])) {
    finish();
    return;
  }
  if (!existsSync('/proc/self/status')) {
    skip('needs /proc to read resident memory (Linux)');
    finish();
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'codecall-soak-'));
  const configPath = join(dir, 'codecall.json');
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        expenses: {
          command: process.execPath,
          args: [join(ROOT, 'examples', 'expense-server', 'server.mjs')],
          tools: { flag_expense: { allowedCallers: ['direct'] } },
        },
      },
      sandbox: {
        cpuTimeMs: 800,
        wallTimeMs: 20_000,
        memoryMb: 64,
        maxStdoutBytes: 16_384,
        // The arguments flood (6 calls of 1 MB) crosses this at its fifth call. A small flood keeps
        // its CPU (some 10–25 ms per 1 MB call copied out of the isolate) within cpuTimeMs on a
        // loaded machine; 12 calls against 8 MiB ran out of it one time in six at load 16.
        maxPendingToolArgsBytes: 4 * 1_048_576,
      },
      history: { path: join(dir, 'history.sqlite') },
      // The soak measures a serving server: it starts once the expense server is connected
      // (by default serve answers at once, and a script sent before the upstream connected is
      // told its tools are not available yet).
      serve: { waitForServersMs: 20_000 },
    }),
  );
  const launcher = spawn(
    process.execPath,
    [join(ROOT, 'bin', 'codecall.js'), 'serve', '--http', '--port', '0', '--config', configPath],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  const url = await new Promise<string>((resolveUrl, reject) => {
    launcher.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const match = /listening on (http:\/\/\S+)/.exec(stderr);
      if (match) resolveUrl(match[1]!);
    });
    launcher.once('exit', () => reject(new Error(`codecall serve exited:\n${stderr}`)));
  });
  // The launcher re-executes node with --no-node-snapshot: the server is its child.
  const server =
    children(launcher.pid!).find((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('cli/main.js'),
    ) ?? launcher.pid!;

  const clients: Client[] = [];
  for (let i = 0; i < SESSIONS; i++) {
    const client = new Client({ name: `soak-${i}`, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    clients.push(client);
  }
  const tally: Tally = { answered: 0, wrong: [], failed: [], latencyUs: new Map() };
  let sent = 0;
  const sequential = async (count: number): Promise<void> => {
    for (const kind of interleave(count, sent)) await callOne(clients[0]!, kind, tally);
    sent += count;
  };
  const concurrent = async (count: number): Promise<void> => {
    const queue = interleave(count, sent);
    sent += count;
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async (_, lane) => {
        while (next < queue.length) {
          const kind = queue[next++]!;
          await callOne(clients[lane % SESSIONS]!, kind, tally);
        }
      }),
    );
  };

  const started = nowUs();
  const blocks = Math.max(2, Math.ceil(MEASURED_CALLS / BLOCK_CALLS));
  console.log(
    `Soak of one codecall serve --http process: warm-up of ${WARMUP_SEQUENTIAL_CALLS} sequential + ` +
      `${WARMUP_CONCURRENT_CALLS} concurrent calls, then ${blocks}×${BLOCK_CALLS} concurrent calls ` +
      `(${IN_FLIGHT} in flight over ${SESSIONS} sessions), ${KINDS.length} kinds of request`,
  );
  await sequential(WARMUP_SEQUENTIAL_CALLS);
  await concurrent(WARMUP_CONCURRENT_CALLS);
  const warm = await settledRssMb(server);
  const warmWorkers = workersRssMb(server);
  const hostSamples: number[] = [];
  const workerSamples: number[] = [];
  for (let block = 0; block < blocks; block++) {
    await concurrent(BLOCK_CALLS);
    hostSamples.push(await settledRssMb(server));
    workerSamples.push(workersRssMb(server));
    console.log(
      `  after ${String((block + 1) * BLOCK_CALLS).padStart(5)} measured runs: host RSS ` +
        `${hostSamples[block]!.toFixed(0)} MB, workers RSS ${workerSamples[block]!.toFixed(0)} MB ` +
        `(${workerPids(server).length} worker processes)`,
    );
  }
  const tree = treeRssMb(launcher.pid!);
  const elapsedS = (nowUs() - started) / 1e6;
  const last = await clients[0]!.callTool({
    name: 'execute_code',
    arguments: { code: 'console.log("still here")' },
  });
  const stillServing = (last as CallToolResult).content.some(
    (c) => c.type === 'text' && c.text.includes('still here'),
  );

  for (const client of clients) await client.close();
  launcher.kill('SIGTERM');
  const exit = await new Promise<number | null>((resolveExit) =>
    launcher.once('exit', (code) => resolveExit(code)),
  );
  rmSync(dir, { recursive: true, force: true });

  const total = sent;
  for (const wrong of tally.wrong.slice(0, 5)) console.log(`  wrong answer (${wrong.kind}): ${wrong.text}`);
  for (const failed of tally.failed.slice(0, 5)) console.log(`  no answer (${failed.kind}): ${failed.error}`);
  figure('requests sent', total, 'calls');
  figure('requests answered', tally.answered, 'calls', { min: total });
  figure('answers of the expected kind', tally.answered - tally.wrong.length, 'calls', { min: total });
  figure('served a normal request after the soak', stillServing ? 1 : 0, 'bool', { min: 1 });
  figure('exit code after SIGTERM', exit ?? -1, '', { min: 0, max: 0 });
  for (const kind of KINDS) {
    const latencies = tally.latencyUs.get(kind.name) ?? [];
    figure(`p50 latency: ${kind.name} (${latencies.length} calls)`, percentile(latencies, 50) / 1000, 'ms');
  }
  const secondHalf = hostSamples.slice(Math.floor(hostSamples.length / 2));
  figure('host RSS after warm-up', warm, 'MB');
  figure('host RSS at end', hostSamples[hostSamples.length - 1]!, 'MB');
  figure('host RSS, highest sample of the second half', Math.max(...secondHalf), 'MB');
  figure('host RSS, highest sample of the second half / after warm-up', Math.max(...secondHalf) / warm, '×', {
    max: 1.1,
  });
  figure('sandbox workers RSS after warm-up', warmWorkers, 'MB');
  figure('sandbox workers RSS, highest sample', Math.max(...workerSamples), 'MB');
  figure('sandbox workers RSS at end', workerSamples[workerSamples.length - 1]!, 'MB');
  figure('process tree RSS at end (server, expense server, sandbox workers)', tree, 'MB');
  figure('soak duration', elapsedS, 's');
  finish();
}

await main();
