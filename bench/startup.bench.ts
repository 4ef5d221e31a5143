/**
 * Start-up cost of the CLI and the library, each as a ratio to a floor measured in the same run
 * (issue 11, "Load only what a command uses"): whole processes, timed with spawnSync, runs
 * interleaved so machine noise falls on both sides, medians compared.
 *
 *   codecall --help                      ≤ 1.5× `node -e 0`
 *   codecall exec over-budget.ts         ≤ 1.25× a plain MCP SDK client doing the same job
 *                                          (bench/startup/plain-sdk-client.mjs: same server, same
 *                                          tool calls, same printed lines, no sandbox)
 *   import('codecall')                   ≤ 2× importing isolated-vm + the MCP client alone
 *
 * Then the phases of `codecall exec` (its `CODECALL_TRACE_STARTUP=1` marks, median of a few
 * separate runs): when each ended, in ms since the process started.
 *
 * Run: `npm run bench -- startup` (after `npm run build`). STARTUP_BENCH_RUNS sets the runs per
 * figure (default 11).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { figure, finish, hasBuild, percentile, skip } from './harness.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const runs = Math.max(1, Number(process.env.STARTUP_BENCH_RUNS ?? 11));
const node = process.execPath;
/**
 * The probes' environment: `codecall exec` records its usage history in a temp folder, not in
 * the work tree's examples/.codecall (the test suite fails a run that leaves files there).
 */
const historyDir = mkdtempSync(join(tmpdir(), 'codecall-startup-bench-'));
process.on('exit', () => rmSync(historyDir, { recursive: true, force: true }));
const env = { ...process.env, CODECALL_HISTORY_PATH: join(historyDir, 'history.sqlite') };

interface Probe {
  label: string;
  args: string[];
  /** Text the run's stdout must contain: a probe that did not do its job is not timed. */
  expect: string;
}

/** Runs `probe` once and returns its wall time in ms, or an error message. */
function once(probe: Probe): number | string {
  const start = performance.now();
  const result = spawnSync(node, probe.args, { cwd: root, encoding: 'utf8', env });
  const ms = performance.now() - start;
  if (result.status !== 0 || !result.stdout.includes(probe.expect)) {
    return `${probe.label} failed (exit ${result.status}): ${(result.stderr || result.stdout).slice(0, 300)}`;
  }
  return ms;
}

/** Median wall times of `a` and `b`, run alternately `runs` times after one warm-up each. */
function pair(a: Probe, b: Probe): [number, number] | undefined {
  const times: [number[], number[]] = [[], []];
  for (let i = -1; i < runs; i++) {
    for (const [k, probe] of [a, b].entries()) {
      const ms = once(probe);
      if (typeof ms === 'string') {
        skip(ms);
        return undefined;
      }
      if (i >= 0) times[k]!.push(ms);
    }
  }
  return [percentile(times[0], 50), percentile(times[1], 50)];
}

function compare(floor: Probe, subject: Probe, max: number): void {
  const medians = pair(floor, subject);
  if (!medians) return;
  const [floorMs, subjectMs] = medians;
  figure(`${floor.label} (floor), median`, floorMs, 'ms');
  figure(`${subject.label}, median`, subjectMs, 'ms');
  figure(`${subject.label} ÷ floor`, subjectMs / floorMs, '×', { max });
}

/** Traced runs of `codecall exec` whose phases are shown (not timed against the floor). */
const TRACED_RUNS = Math.max(1, Math.min(runs, 5));

/**
 * Where `codecall exec`'s time goes: separate runs with `CODECALL_TRACE_STARTUP=1`, the median
 * time since process start at which each phase ended (no target: the ratio above is the figure).
 */
function execPhases(args: string[]): void {
  const phases = new Map<string, number[]>();
  for (let i = 0; i < TRACED_RUNS; i++) {
    const result = spawnSync(node, args, {
      cwd: root,
      encoding: 'utf8',
      env: { ...env, CODECALL_TRACE_STARTUP: '1' },
    });
    if (result.status !== 0) return skip(`traced codecall exec failed: ${result.stderr.slice(0, 300)}`);
    for (const line of result.stderr.split('\n')) {
      const match = /^codecall trace +([\d.]+) ms {2}(.+)$/.exec(line);
      if (match) phases.set(match[2]!, [...(phases.get(match[2]!) ?? []), Number(match[1])]);
    }
  }
  const ended = [...phases].map(([phase, times]) => [phase, percentile(times, 50)] as const);
  for (const [phase, ms] of ended.sort((a, b) => a[1] - b[1])) figure(`  exec phase: ${phase}`, ms, 'ms');
}

const cli = join(root, 'bin', 'codecall.js');
const esm = (code: string): string[] => ['--no-node-snapshot', '--input-type=module', '-e', code];

console.log(`startup: whole-process wall time, median of ${runs} interleaved runs`);
if (hasBuild(root, ['cli/main.js', 'index.js', 'testing/servers/index.js'])) {
  compare(
    { label: 'node -e 0', args: ['-e', 'console.log("ok")'], expect: 'ok' },
    { label: 'codecall --help', args: [cli, '--help'], expect: 'Usage: codecall' },
    1.5,
  );
  compare(
    {
      label: 'plain MCP SDK client, same job',
      args: ['bench/startup/plain-sdk-client.mjs'],
      expect: 'Scanned 2400',
    },
    {
      label: 'codecall exec over-budget.ts',
      args: [cli, 'exec', 'examples/scripts/over-budget.ts', '--config', 'examples/codecall.json'],
      expect: 'Scanned 2400',
    },
    1.25,
  );
  execPhases([cli, 'exec', 'examples/scripts/over-budget.ts', '--config', 'examples/codecall.json']);
  compare(
    {
      label: 'import isolated-vm + MCP client',
      args: esm(
        "await import('isolated-vm'); await import('@modelcontextprotocol/sdk/client/index.js');" +
          " await import('@modelcontextprotocol/sdk/client/stdio.js'); console.log('ok')",
      ),
      expect: 'ok',
    },
    {
      label: "import('codecall')",
      args: esm("const m = await import('./dist/index.js'); console.log(typeof m.CodecallRuntime)"),
      expect: 'function',
    },
    2,
  );
}
finish();
