/**
 * Hostile-neighbour benchmark: two MCP clients of one codecall server process (two sessions of
 * `createCodecallServer` over one runtime, SDK clients over in-memory pairs), in front of a
 * hostile MCP server of 2,000 tools in a process of its own (stdio). The attacker runs one host-stall class at a time in a
 * loop; the victim measures its `tools/list` round trips meanwhile.
 *
 * Classes: regex search that backtracks exponentially on V8 (`(a|aa)+$` against a 2,000-char
 * description), a search hit whose input schema is a 2^40-path `$ref` DAG (declarations),
 * catastrophic schema `pattern`s against crafted strings (validated on the host), and a flood
 * of unknown tool names (did-you-mean over the catalog).
 *
 * Every client's request reaches the server on a later turn of the event loop, as a request read
 * from a socket does (see `connect`), so the victim's round trips wait behind the host's work.
 *
 * Figure: the victim's `tools/list` p99 under each class as a ratio of its idle p99 measured in
 * the same run: windows of idle and of every class alternate over several rounds (in a rotating
 * order), so a machine that gets busier or quieter during the run moves floor and load alike,
 * and each p99 pools 600 samples. Target ≤ 2. Benign calls of the same kinds (a plain regex
 * search, a keyword search, a script making valid calls) are measured the same way, without a
 * target, to show what the host costs a neighbour anyway.
 */
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { parseConfig } from '../src/config/index.js';
import { CodecallRuntime } from '../src/execute/index.js';
import { createCodecallServer } from '../src/server/index.js';
import { createHostileServer, type HostileTool } from '../src/testing/servers/hostile-server.js';
import { figure, finish, nowUs, percentile } from './harness.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const TOOL_COUNT = 2_000;

function refDag(levels: number): Record<string, unknown> {
  const properties: Record<string, unknown> = { p0: { type: 'string' } };
  for (let i = 1; i <= levels; i++) {
    properties[`p${i}`] = {
      type: 'object',
      properties: { left: { $ref: `#/properties/p${i - 1}` }, right: { $ref: `#/properties/p${i - 1}` } },
    };
  }
  return { type: 'object', properties };
}

function catalog(): HostileTool[] {
  const tools: HostileTool[] = [
    { name: 'aaaa', description: `${'a'.repeat(1_990)}!` },
    { name: 'dag_report', description: 'Renders the quarterly dag report.', inputSchema: refDag(40) },
    {
      name: 'slug',
      description: 'Takes a slug.',
      inputSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(\\w+\\s?)*$' } } },
    },
  ];
  for (let i = tools.length; i < TOOL_COUNT; i++) {
    tools.push({
      name: `tool_${i}_${['list', 'get', 'update', 'delete'][i % 4]}_record`,
      description: `Tool ${i}.`,
    });
  }
  return tools;
}

async function connect(runtime: CodecallRuntime): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createCodecallServer({ runtime }).connect(serverSide);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(clientSide);
  // An in-memory transport hands a request to the server in the same microtask chain as the
  // client's call, so the round trip never waits for the event loop and cannot see a host
  // stall (a victim timed that way measured no more than OS preemption: 0 of 4,800 round trips
  // let a queued setImmediate run). A request over a socket is read on a later turn of the
  // loop, behind whatever the host is doing: deliver each request that way.
  const send = clientSide.send.bind(clientSide);
  clientSide.send = async (message, options) => {
    await new Promise((resolve) => setImmediate(resolve));
    return send(message, options);
  };
  return client;
}

/** Benign calls of the same kinds: what the host costs anyway, for comparison (no target). */
const BENIGN: Record<string, { name: string; arguments: Record<string, unknown> }> = {
  'benign regex search get_.*_record': {
    name: 'search_tools',
    arguments: { query: 'get_.*_record', regex: true },
  },
  'benign search "list record"': { name: 'search_tools', arguments: { query: 'list record' } },
  'benign execute_code (20 valid calls)': {
    name: 'execute_code',
    arguments: { code: `for (let i = 0; i < 20; i++) await tools.hostile.slug({ s: 'two words' });` },
  },
};

const CLASSES: Record<string, { name: string; arguments: Record<string, unknown> }> = {
  'regex search (a|aa)+$': { name: 'search_tools', arguments: { query: '(a|aa)+$', regex: true } },
  '$ref DAG declarations': { name: 'search_tools', arguments: { query: 'dag report' } },
  'schema pattern ^(\\w+\\s?)*$': {
    name: 'execute_code',
    arguments: {
      code: `for (let i = 0; i < 20; i++) { try { await tools.hostile.slug({ s: 'a'.repeat(30 + i) + '!' }); } catch {} }`,
    },
  },
  'unknown tool names ×300': {
    name: 'execute_code',
    arguments: {
      code: `await Promise.allSettled(Array.from({ length: 300 }, (_, i) => callTool('hostile.tool_' + (100 + i) + '_lst_record', {})));`,
    },
  },
};

/** Victim round trips per window; windows of every class (and idle) are interleaved. */
const WINDOW_SAMPLES = 100;
/** Rounds: each round measures one window of idle and of every class, in a rotating order. */
const ROUNDS = 6;

async function listLatencies(victim: Client, samples: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < samples; i++) {
    const started = nowUs();
    await victim.listTools();
    out.push(nowUs() - started);
    // Spread the samples over time, as a client polling would.
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  return out;
}

/** One window: the victim's round trips while the attacker repeats `call` (none: idle). */
async function window(
  victim: Client,
  attacker: Client,
  call: { name: string; arguments: Record<string, unknown> } | undefined,
): Promise<{ latencies: number[]; rounds: number }> {
  let stop = false;
  let rounds = 0;
  const attack = (async () => {
    while (call && !stop) {
      await attacker.callTool(call);
      rounds++;
      // In-memory transports answer in microtasks; a real client's next request arrives on a
      // later turn of the loop (a socket read), so let timers run between rounds.
      await new Promise((resolve) => setImmediate(resolve));
    }
  })();
  const latencies = await listLatencies(victim, WINDOW_SAMPLES);
  stop = true;
  await attack;
  return { latencies, rounds };
}

// The hostile MCP server runs in a process of its own (this bundle, started with `serve-hostile`),
// over stdio, as an upstream server does: its own work is not the host's.
if (process.argv[2] === 'serve-hostile') {
  const server = createHostileServer({ tools: catalog() }).create();
  process.stdin.on('end', () => void server.close());
  await server.connect(new StdioServerTransport());
} else {
  await measure();
}

async function measure(): Promise<void> {
  const runtime = await CodecallRuntime.open({
    config: parseConfig(
      {
        mcpServers: {
          hostile: { command: process.execPath, args: [fileURLToPath(import.meta.url), 'serve-hostile'] },
        },
        sandbox: { workers: 1 },
      },
      { file: join(ROOT, 'codecall.json'), env: { ...process.env } as Record<string, string> },
    ),
    history: false,
    tools: { requireAll: true },
  });
  try {
    const victim = await connect(runtime);
    const attacker = await connect(runtime);
    // Warm up both paths (sandbox worker, compiler, validators, search worker).
    await listLatencies(victim, WINDOW_SAMPLES);
    for (const call of [...Object.values(BENIGN), ...Object.values(CLASSES)]) await attacker.callTool(call);
    const labels = ['idle', ...Object.keys(BENIGN), ...Object.keys(CLASSES)];
    const calls: Record<string, { name: string; arguments: Record<string, unknown> } | undefined> = {
      idle: undefined,
      ...BENIGN,
      ...CLASSES,
    };
    const latencies = new Map<string, number[]>(labels.map((label) => [label, []]));
    const rounds = new Map<string, number>(labels.map((label) => [label, 0]));
    for (let round = 0; round < ROUNDS; round++) {
      // Rotate the order so that no class always follows the same neighbour.
      const order = labels.map((_, i) => labels[(i + round) % labels.length]!);
      for (const label of order) {
        const measured = await window(victim, attacker, calls[label]);
        latencies.get(label)!.push(...measured.latencies);
        rounds.set(label, rounds.get(label)! + measured.rounds);
      }
    }
    const idleSamples = latencies.get('idle')!;
    const idle = percentile(idleSamples, 99);
    console.log(
      `  victim tools/list idle p99: ${(idle / 1000).toFixed(2)} ms, p50 ${(percentile(idleSamples, 50) / 1000).toFixed(2)} ms ` +
        `(${idleSamples.length} samples in ${ROUNDS} windows interleaved with the others)`,
    );
    for (const label of labels.slice(1)) {
      const loaded = latencies.get(label)!;
      figure(
        `tools/list p99 under ${label} (${rounds.get(label)} rounds) / idle`,
        percentile(loaded, 99) / idle,
        '×',
        label in CLASSES ? { max: 2 } : undefined,
      );
    }
    await Promise.all([victim.close(), attacker.close()]);
  } finally {
    await runtime.close();
  }
  finish();
}
