/**
 * Data-heavy runs (issue 29, docs/data.md): memory and time of a script that aggregates a
 * result far larger than the isolate, against a host that does the same work without codecall.
 *
 * What is counted: the **whole process tree** of each measurement, summed — the process that
 * runs it, codecall's sandbox workers (process mode, the warm spare included) and the MCP
 * server's process (a real stdio server, test/fixtures/servers/file-results-server.mjs). Each
 * process's peak is its `VmHWM` (/proc), read just before the tree closes; the sum of the peaks
 * is an upper bound of the tree's simultaneous peak, taken the same way on both sides. Every
 * measurement runs in a fresh child process (so no memory of an earlier one is reused).
 *
 * 1. A JSON-lines result of `CODECALL_BENCH_DATA_MB` (default 1024 MB): the server writes it to
 *    its data folder and returns a `resource_link` (a file this large cannot be one JSON-RPC
 *    message); with that folder in `resultHandles.linkRoots` the script gets a handle streamed
 *    from the file and groups it on the host (`groupBy('level', { sum: 'ms' })`). Floor: a
 *    minimal stdio JSON-RPC client (no SDK, see `plainClient`) calls the same server, then
 *    streams the file (`readline` + `JSON.parse` per line) into the same groups. Target, both modes: tree peak
 *    ≤ 1.5× the floor's.
 * 2. A 100 MB JSON result (one message) summed in a script, process mode. Floor: the minimal
 *    client gets the same result from the same server, parses the message and the text in it. Targets: tree peak
 *    ≤ 2× the floor's, wall time ≤ 1.5× (the faster of `CODECALL_BENCH_DATA_RUNS` runs, default
 *    2, on each side).
 *
 * Answers are checked on both sides (a wrong answer fails the bench).
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { once } from 'node:events';
import { figure, finish, hasBuild, nowUs, skip } from './harness.js';
import { treeMemory, type TreeMemory } from './tree-memory.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const SERVER = join(ROOT, 'test', 'fixtures', 'servers', 'file-results-server.mjs');
const MB = 1_048_576;
const CHILD_FLAG = '--data-child';
const DATA_MB = Number(process.env.CODECALL_BENCH_DATA_MB ?? 1024);
const RUNS = Math.max(1, Number(process.env.CODECALL_BENCH_DATA_RUNS ?? 2));
/** Rows of the ~100 MB JSON result (about 100 bytes each). */
const JSON_ROWS = Number(process.env.CODECALL_BENCH_JSON_ROWS ?? 1_000_000);
const LOG_FILE = 'bench.jsonl';

// ---------------------------------------------------------------------------------------------
// Child mode: one measurement per fresh process

interface Measured {
  answer: string;
  ms: number;
  memory: TreeMemory;
}

type Scenario = 'floor-lines' | 'lines-in-process' | 'lines-process' | 'floor-json' | 'json-process';

/**
 * The floor's client: the fewest steps a host can take to get a tool result from a stdio MCP
 * server — spawn, `initialize`, `tools/call`, each message read as chunks joined once and parsed
 * once (no SDK: the SDK's stdio read buffer joins every chunk to what it holds, which makes a
 * 100 MB message cost seconds, a floor codecall's own transport does not pay).
 */
async function plainClient(dataDir: string, serverArgs: string[]) {
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, [SERVER, dataDir, ...serverArgs], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const waiting = new Map<number, (message: { result?: unknown; error?: unknown }) => void>();
  let chunks: Buffer[] = [];
  child.stdout.on('data', (chunk: Buffer) => {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      chunks.push(chunk.subarray(start, newline));
      const line = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      chunks = [];
      start = newline + 1;
      const message = JSON.parse(line.toString('utf8')) as { id?: number; result?: unknown; error?: unknown };
      if (typeof message.id === 'number') waiting.get(message.id)?.(message);
    }
    if (start < chunk.length) chunks.push(chunk.subarray(start));
  });
  let ids = 0;
  const request = (method: string, params: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = ++ids;
      waiting.set(id, (message) => {
        waiting.delete(id);
        if (message.error !== undefined) reject(new Error(JSON.stringify(message.error)));
        else resolve(message.result);
      });
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'floor', version: '1.0.0' },
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  return {
    callTool: async (name: string, args: unknown) =>
      (await request('tools/call', { name, arguments: args })) as { content: unknown[] },
    close: async () => {
      child.stdin.end();
      if (child.exitCode === null) await once(child, 'exit');
    },
  };
}

async function runtimeOf(dataDir: string, mode: 'in-process' | 'process', serverArgs: string[]) {
  const { CodecallRuntime } = await import('../src/execute/index.js');
  const { parseConfig } = await import('../src/config/index.js');
  const config = parseConfig(
    {
      mcpServers: {
        f: {
          command: process.execPath,
          args: [SERVER, dataDir, ...serverArgs],
          maxMessageBytes: 512 * MB,
          // The server makes the 100 MB result before it answers `initialize`.
          connectTimeoutMs: 600_000,
          toolTimeoutMs: 1_800_000,
        },
      },
      sandbox: {
        mode,
        workers: 1,
        wallTimeMs: 1_800_000,
        cpuTimeMs: 1_800_000,
        maxToolResultBytes: 512 * MB,
        maxTotalToolResultBytes: 1024 * MB,
      },
    },
    { file: join(dataDir, 'codecall.json'), env: {} },
  );
  return CodecallRuntime.open({
    config,
    history: false,
    resultHandles: { linkRoots: [dataDir] },
  });
}

/** The groups as one canonical line: `level count sum` sorted by level. */
function groupsLine(groups: Record<string, { count: number; sum?: number }>): string {
  return Object.keys(groups)
    .sort()
    .map((key) => `${key} ${groups[key]!.count} ${groups[key]!.sum ?? 0}`)
    .join('; ');
}

async function measure(scenario: Scenario, dataDir: string): Promise<Measured> {
  // The JSON result is made when the server starts, so neither side's time counts making it.
  const serverArgs = scenario.includes('json') ? [`--json-rows=${JSON_ROWS}`] : [];
  if (scenario === 'floor-lines' || scenario === 'floor-json') {
    const client = await plainClient(dataDir, serverArgs);
    const start = nowUs();
    let answer: string;
    if (scenario === 'floor-lines') {
      const result = await client.callTool('file', { name: LOG_FILE });
      const link = (result.content as Array<{ uri: string }>)[0]!;
      const { fileURLToPath } = await import('node:url');
      const { createReadStream } = await import('node:fs');
      const { createInterface } = await import('node:readline');
      const groups: Record<string, { count: number; sum: number }> = {};
      const lines = createInterface({
        input: createReadStream(fileURLToPath(link.uri)),
        crlfDelay: Infinity,
      });
      for await (const line of lines) {
        const row = JSON.parse(line) as { level: string; ms: number };
        const group = (groups[row.level] ??= { count: 0, sum: 0 });
        group.count++;
        group.sum += row.ms;
      }
      answer = groupsLine(groups);
    } else {
      const result = await client.callTool('json_rows', { count: JSON_ROWS });
      const rows = JSON.parse((result.content as Array<{ text: string }>)[0]!.text) as Array<{
        amount: number;
      }>;
      let sum = 0;
      for (const row of rows) sum += row.amount;
      answer = String(sum);
    }
    const ms = (nowUs() - start) / 1_000;
    const memory = treeMemory();
    await client.close();
    return { answer, ms, memory };
  }
  const mode = scenario === 'lines-in-process' ? 'in-process' : 'process';
  const runtime = await runtimeOf(dataDir, mode, serverArgs);
  // Warm the sandbox (a first run pays the pool's start), as the floor's client is connected.
  await runtime.execute('console.log(1)');
  const code =
    scenario === 'json-process'
      ? `const rows = await tools.f.json_rows({ count: ${JSON_ROWS} });
         if (rows.isHandle) console.log(await rows.sum('amount'));
         else { let sum = 0; for (const row of rows) sum += row.amount; console.log(sum); }`
      : `const log = await tools.f.file({ name: ${JSON.stringify(LOG_FILE)} });
         if (!log.isHandle) throw new Error('not a handle: ' + JSON.stringify(log));
         const groups = await log.groupBy('level', { sum: 'ms' });
         console.log(Object.keys(groups).sort().map((k) => k + ' ' + groups[k].count + ' ' + groups[k].sum).join('; '));`;
  const start = nowUs();
  const result = await runtime.execute(code);
  const ms = (nowUs() - start) / 1_000;
  const memory = treeMemory();
  await runtime.close();
  if (result.status !== 'ok')
    throw new Error(`${scenario}: ${JSON.stringify(result.error)} ${result.stderr}`);
  return { answer: result.stdout.trim(), ms, memory };
}

if (process.argv[2] === CHILD_FLAG) {
  const measured = await measure(process.argv[3] as Scenario, process.argv[4]!);
  process.stdout.write(JSON.stringify(measured));
  process.exit(0);
}

/**
 * The memory figures of one measurement against its floor: the whole trees (server included on
 * both sides; the target), then without the server on either side, then codecall's whole tree
 * against the floor's host process alone (the strictest reading).
 */
function memoryFigures(label: string, measured: Measured, floor: Measured, max: number): void {
  const { peakBytes, serverBytes } = measured.memory;
  figure(`${label}: tree peak RSS ÷ floor's tree`, peakBytes / floor.memory.peakBytes, '×', { max });
  figure(
    `  without the server on both sides (info)`,
    (peakBytes - serverBytes) / (floor.memory.peakBytes - floor.memory.serverBytes),
    '×',
  );
  figure(
    `  whole tree ÷ the floor's host process alone (info)`,
    peakBytes / (floor.memory.peakBytes - floor.memory.serverBytes),
    '×',
  );
}

function inChild(scenario: Scenario, dataDir: string): Measured {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, process.argv[1]!, CHILD_FLAG, scenario, dataDir],
    {
      encoding: 'utf8',
      maxBuffer: 16 * MB,
    },
  );
  if (child.status !== 0)
    throw new Error(`${scenario} failed (${child.status}): ${child.stderr.slice(-2_000)}`);
  return JSON.parse(child.stdout) as Measured;
}

// ---------------------------------------------------------------------------------------------
// Parent: data, then each measurement in its own process

/** Writes ~`mb` MB of JSON lines; returns the expected groups line and the line count. */
async function writeLog(file: string, mb: number): Promise<{ expected: string; lines: number }> {
  const out = createWriteStream(file);
  const groups: Record<string, { count: number; sum: number }> = {};
  let bytes = 0;
  let lines = 0;
  const target = mb * MB;
  while (bytes < target) {
    let chunk = '';
    for (let k = 0; k < 10_000; k++, lines++) {
      const i = lines;
      const level = i % 100 === 0 ? 'error' : i % 10 === 0 ? 'warn' : 'info';
      const ms = i % 997;
      const group = (groups[level] ??= { count: 0, sum: 0 });
      group.count++;
      group.sum += ms;
      chunk += `{"ts":${1_700_000_000 + i},"level":"${level}","service":"svc-${i % 20}","ms":${ms},"bytes":${(i * 7919) % 65_536},"path":"/v1/items/${i % 100_000}"}\n`;
    }
    bytes += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return { expected: groupsLine(groups), lines };
}

if (process.platform !== 'linux') {
  skip('the process tree is read from /proc (Linux only)');
} else if (hasBuild(ROOT, ['sandbox/prelude.js', 'isolate/worker.js'])) {
  const work = mkdtempSync(join(tmpdir(), 'codecall-data-bench-'));
  process.on('exit', () => rmSync(work, { recursive: true, force: true }));
  const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`  load average at start: ${load()}`);

  // 1. JSON lines through a resource_link, both modes.
  const { expected, lines } = await writeLog(join(work, LOG_FILE), DATA_MB);
  console.log(`  data: ${DATA_MB} MB of JSON lines (${lines} lines) in the server's data folder`);
  const floor = inChild('floor-lines', work);
  if (floor.answer !== expected) throw new Error(`floor answer ${floor.answer} ≠ ${expected}`);
  console.log(
    `  floor: minimal stdio client + readline/JSON.parse stream, ${(floor.ms / 1_000).toFixed(1)} s, tree peak ${(floor.memory.peakBytes / MB).toFixed(0)} MB (${floor.memory.parts.join(', ')})`,
  );
  for (const mode of ['in-process', 'process'] as const) {
    const measured = inChild(mode === 'in-process' ? 'lines-in-process' : 'lines-process', work);
    figure(`[${mode}] ${DATA_MB} MB JSON lines answer matches`, measured.answer === expected ? 1 : 0, '', {
      min: 1,
    });
    console.log(
      `  [${mode}]   tree peak ${(measured.memory.peakBytes / MB).toFixed(0)} MB (${measured.memory.parts.join(', ')}), ${(measured.ms / 1_000).toFixed(1)} s`,
    );
    memoryFigures(`[${mode}] ${DATA_MB} MB JSON lines grouped`, measured, floor, 1.5);
    figure(`[${mode}]   wall time ÷ floor (info)`, measured.ms / floor.ms, '×');
  }
  rmSync(join(work, LOG_FILE), { force: true });

  // 2. A 100 MB JSON result in process mode.
  const best = (scenario: Scenario): Measured => {
    const runs = Array.from({ length: RUNS }, () => inChild(scenario, work));
    const fastest = runs.reduce((a, b) => (b.ms < a.ms ? b : a));
    const leanest = runs.reduce((a, b) => (b.memory.peakBytes < a.memory.peakBytes ? b : a));
    return { answer: fastest.answer, ms: fastest.ms, memory: leanest.memory };
  };
  const jsonFloor = best('floor-json');
  console.log(
    `  floor: minimal stdio client + JSON.parse of a ${JSON_ROWS}-row JSON result, ${jsonFloor.ms.toFixed(0)} ms, tree peak ${(jsonFloor.memory.peakBytes / MB).toFixed(0)} MB (${jsonFloor.memory.parts.join(', ')})`,
  );
  const json = best('json-process');
  figure('[process] 100 MB JSON result answer matches', json.answer === jsonFloor.answer ? 1 : 0, '', {
    min: 1,
  });
  console.log(
    `  [process]   tree peak ${(json.memory.peakBytes / MB).toFixed(0)} MB (${json.memory.parts.join(', ')}), ${json.ms.toFixed(0)} ms`,
  );
  memoryFigures('[process] 100 MB JSON result summed', json, jsonFloor, 2);
  figure('[process] 100 MB JSON result summed: wall time ÷ floor', json.ms / jsonFloor.ms, '×', { max: 1.5 });
  console.log(`  load average at end: ${load()}`);
}
finish();
