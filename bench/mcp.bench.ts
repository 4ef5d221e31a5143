/**
 * MCP tool layer benchmarks.
 *
 * 1. Per-call overhead of `ToolPool.call` (policy, input validation, timeout/cancel wiring,
 *    result normalization) on top of the bare MCP round trip (`client.request('tools/call')`):
 *    same server, same transport, calls interleaved in the same run. Target p50 ≤ 50 µs.
 * 2. Connecting to N stdio servers concurrently takes about as long as the slowest one, not
 *    their sum. Target: N-server open ≤ 1.5 × the slowest single open.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { parseConfig } from '../src/config/index.js';
import { createExpenseServer, inMemoryTransport } from '../src/testing/servers/index.js';
import { ToolPool } from '../src/tools/index.js';
import { figure, finish, hasBuild, nowUs, percentile, skip } from './harness.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const CALLS = 3_000;
const WARMUP = 300;
const ARGS = { level: 'L3', quarter: 'Q3' };

async function overhead(): Promise<void> {
  console.log('Per-call overhead over the bare MCP round trip (in-memory transport, get_budget_by_level)');
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createExpenseServer().connect(serverSide);
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(clientSide);
  const pool = await ToolPool.open(
    {},
    { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
  );
  const bare = () =>
    client.request(
      { method: 'tools/call', params: { name: 'get_budget_by_level', arguments: ARGS } },
      CallToolResultSchema,
    );
  const ours = () => pool.call('expenses.get_budget_by_level', ARGS, { caller: 'code_execution' });
  const signal = new AbortController().signal;
  const oursWithSignal = () =>
    pool.call('expenses.get_budget_by_level', ARGS, { caller: 'code_execution', signal, timeoutMs: 10_000 });
  for (let i = 0; i < WARMUP; i++) {
    await bare();
    await ours();
    await oursWithSignal();
  }
  const bareUs: number[] = [];
  const oursUs: number[] = [];
  const signalUs: number[] = [];
  const time = async (fn: () => Promise<unknown>, into: number[]) => {
    const start = nowUs();
    await fn();
    into.push(nowUs() - start);
  };
  // Interleave so drift (GC, CPU contention from other processes) hits both equally.
  for (let i = 0; i < CALLS; i++) {
    await time(bare, bareUs);
    await time(ours, oursUs);
    await time(oursWithSignal, signalUs);
  }
  const floor = percentile(bareUs, 50);
  figure('bare MCP round trip p50 (floor)', floor, 'µs');
  figure('ToolPool.call p50', percentile(oursUs, 50), 'µs');
  figure('codecall overhead p50 (ToolPool.call − floor)', percentile(oursUs, 50) - floor, 'µs', { max: 50 });
  figure('codecall overhead p50 with signal + timeout', percentile(signalUs, 50) - floor, 'µs', { max: 50 });
  figure('ToolPool.call p50 / floor', percentile(oursUs, 50) / floor, '×');
  figure('codecall overhead p90', percentile(oursUs, 90) - percentile(bareUs, 90), 'µs');
  await pool.close();
  await client.close();
}

/** A stdio expense server that waits `delayMs` before serving (a server that starts slowly). */
function slowServer(name: string, delayMs: number) {
  const server = join(ROOT, 'examples', 'expense-server', 'server.mjs');
  return {
    [name]: {
      command: process.execPath,
      args: ['-e', `setTimeout(() => import(${JSON.stringify(server)}), ${delayMs})`],
    },
  };
}

async function openMs(servers: Record<string, unknown>): Promise<number> {
  const config = parseConfig({ mcpServers: servers }, { file: join(ROOT, 'codecall.json'), env: {} });
  const start = nowUs();
  const pool = await ToolPool.open(config, { requireAll: true });
  const elapsed = (nowUs() - start) / 1_000;
  await pool.close();
  return elapsed;
}

async function connect(): Promise<void> {
  // The slow test servers run from dist/.
  if (!hasBuild(ROOT, ['testing/servers/index.js'])) return;
  const delays = [150, 300, 450, 600];
  console.log(`Connecting to ${delays.length} stdio servers (start-up delays ${delays.join('/')} ms)`);
  const singles: number[] = [];
  for (const [index, delay] of delays.entries()) singles.push(await openMs(slowServer(`s${index}`, delay)));
  const all = Object.assign({}, ...delays.map((delay, index) => slowServer(`s${index}`, delay))) as Record<
    string,
    unknown
  >;
  const together = await openMs(all);
  const slowest = Math.max(...singles);
  const sum = singles.reduce((a, b) => a + b, 0);
  figure('slowest single server open', slowest, 'ms');
  figure('sum of single opens', sum, 'ms');
  figure(`all ${delays.length} servers at once`, together, 'ms');
  figure('all at once / slowest single', together / slowest, '×', { max: 1.5 });

  const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
  if (existsSync(bin('mcp-server-everything'))) {
    const npmServers = {
      everything: { command: process.execPath, args: [bin('mcp-server-everything')] },
      memory: { command: process.execPath, args: [bin('mcp-server-memory')] },
      filesystem: { command: process.execPath, args: [bin('mcp-server-filesystem'), ROOT] },
    };
    const each: number[] = [];
    for (const [name, server] of Object.entries(npmServers)) each.push(await openMs({ [name]: server }));
    const three = await openMs(npmServers);
    figure('npm servers: slowest single open', Math.max(...each), 'ms');
    figure(
      'npm servers: sum of single opens',
      each.reduce((a, b) => a + b, 0),
      'ms',
    );
    figure('npm servers: all 3 at once', three, 'ms');
  } else {
    skip(`npm servers: ${bin('mcp-server-everything')} is missing (run \`npm install\`)`);
  }
}

await overhead();
await connect();
finish();
