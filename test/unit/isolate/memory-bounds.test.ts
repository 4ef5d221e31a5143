/**
 * @module
 * Memory that a script can make the host (or its worker) hold outside the isolate's heap, where
 * `memoryMb` does not count it: tool-call arguments piling up while the script runs without
 * awaiting, huge tool names, huge return values. Each case runs in both modes against real
 * pools and measures the peak resident memory of the host process and of the worker (Linux
 * `/proc`: the peak is reset through `clear_refs` before each case).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SandboxPool, type SandboxMode } from '../../../src/isolate/index.js';
import { runScript } from './sandbox-helpers.js';

const hasProc = existsSync('/proc/self/clear_refs');

function statusKb(pid: number | 'self', field: 'VmRSS' | 'VmHWM'): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}

/** This process's sandbox workers. */
function workerPids(): number[] {
  let pids: number[];
  try {
    pids = execFileSync('pgrep', ['-P', String(process.pid)], { encoding: 'utf8' })
      .split('\n')
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return pids.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('isolate/worker.js');
    } catch {
      return false;
    }
  });
}

/**
 * Runs `body` and returns how far the peak resident memory of this process and of the pool's
 * workers rose above their resident memory before it, in MB.
 */
async function peakGrowthMb<T>(
  body: () => Promise<T>,
): Promise<{ value: T; hostMb: number; workerMb: number }> {
  const pids: (number | 'self')[] = ['self', ...workerPids()];
  const before = new Map<number | 'self', number>();
  for (const pid of pids) {
    writeFileSync(`/proc/${pid}/clear_refs`, '5'); // resets VmHWM to the current VmRSS
    before.set(pid, statusKb(pid, 'VmRSS'));
  }
  const value = await body();
  let hostMb = 0;
  let workerMb = 0;
  for (const pid of pids) {
    let grown: number;
    try {
      grown = (statusKb(pid, 'VmHWM') - before.get(pid)!) / 1024;
    } catch {
      continue; // a worker that was replaced
    }
    if (pid === 'self') hostMb = grown;
    else workerMb = Math.max(workerMb, grown);
  }
  return { value, hostMb, workerMb };
}

describe.runIf(hasProc).each<SandboxMode>(['in-process', 'process'])(
  'memory outside the isolate (%s)',
  (mode) => {
    let pool: SandboxPool;
    beforeAll(async () => {
      pool = await SandboxPool.open({
        mode,
        workers: 1,
        limits: { memoryMb: 64, cpuTimeMs: 20_000, wallTimeMs: 60_000 },
      });
      // A first run, so that lazy start-up work is not counted below.
      await runScript(pool, 'await tools.t.one({ a: 1 });', { tools: { 't.one': () => 1 } });
    });
    afterAll(async () => {
      await pool.close();
    });

    it('bounds bytes of tool-call arguments waiting for an answer: 400 calls of 1 MB in a loop', async () => {
      let dispatched = 0;
      const {
        value: result,
        hostMb,
        workerMb,
      } = await peakGrowthMb(() =>
        runScript(
          pool,
          `const pad = 'x'.repeat(1_000_000);
         const calls = [];
         for (let i = 0; i < 400; i++) calls.push(tools.t.take({ pad }).then(() => 'ok', (error) => error.code));
         const codes = await Promise.all(calls);
         console.log(codes.filter((code) => code === 'ok').length, codes.filter((code) => code === 'TOOL_ARGS_LIMIT').length);
         const batch = await Promise.allSettled([tools.t.take({ pad }), tools.t.take({ pad }), tools.t.take({ pad })]);
         for (const entry of batch) console.log(entry.status === 'fulfilled' ? entry.value : entry.reason.name + ' ' + entry.reason.message);
         console.log(await tools.t.take({ pad }));`,
          {
            limits: { maxPendingToolArgsBytes: 2_500_000 },
            tools: {
              't.take': () => {
                dispatched++;
                return 'taken';
              },
            },
          },
        ),
      );
      expect(result.error).toBeUndefined();
      // Each call counts 1,000,010 bytes of JSON + 6 of name + 64: two fit in 2.5 MB, a third does not.
      expect(result.stdout).toBe(
        '2 398\n' +
          'taken\n' +
          'taken\n' +
          'ToolLimitError Arguments of tool calls waiting for an answer would exceed 2500000 bytes of JSON (2000160 pending now, this call adds 1000080). Await earlier calls before starting more (for example in batches with Promise.all).\n' +
          'taken\n',
      );
      expect(dispatched).toBe(5);
      // Without the bound, 400 MB of arguments pile up in the worker's IPC queue and on the host.
      expect(hostMb).toBeLessThan(150);
      expect(workerMb).toBeLessThan(150);
    });

    it('rejects a 20 MB tool name inside the sandbox and echoes only a prefix', async () => {
      let called = false;
      const {
        value: result,
        hostMb,
        workerMb,
      } = await peakGrowthMb(() =>
        runScript(
          pool,
          `const name = 'x'.repeat(20_000_000);
         for (let i = 0; i < 20; i++) {
           try { await callTool(name, {}); } catch (error) { if (i === 0) console.log(error.code, error.message); }
         }
         try { await (tools as any)['y'.repeat(300)].call({}); } catch (error) { console.log(error.code, error.message); }`,
          {
            tools: {
              't.one': () => {
                called = true;
                return 1;
              },
            },
          },
        ),
      );
      expect(result.error).toBeUndefined();
      expect(result.stdout).toBe(
        `UNKNOWN_TOOL Unknown tool "${'x'.repeat(80)}… (20000000 characters)": tool names are at most 256 characters. Use the names in \`tools\`.\n` +
          `UNKNOWN_TOOL Unknown tool "${'y'.repeat(80)}… (305 characters)": tool names are at most 256 characters. Use the names in \`tools\`.\n`,
      );
      expect(called).toBe(false);
      expect(hostMb).toBeLessThan(100);
      expect(workerMb).toBeLessThan(100);
    });

    it('keeps a huge return value inside the sandbox: only the marker leaves', async () => {
      const { value: result, hostMb } = await peakGrowthMb(() =>
        runScript(pool, "return 'x'.repeat(40_000_000);", { limits: { memoryMb: 200 } }),
      );
      expect(result.status).toBe('ok');
      expect(result.returnValue).toBeUndefined();
      expect(result.stderr).toBe(
        '[return value omitted: over 32768 bytes of JSON — return or print a summary instead]\n',
      );
      // Copied out over IPC, the 40 MB of JSON cost the host at least that much again. (In-process
      // the isolate's own heap is the host's memory, so only process mode can tell.)
      if (mode === 'process') expect(hostMb).toBeLessThan(30);
    });

    it('serves a normal run afterwards', async () => {
      const result = await runScript(pool, 'console.log(await tools.t.one({ a: 1 }));', {
        tools: { 't.one': (args) => args.a },
      });
      expect(result.stdout).toBe('1\n');
    });
  },
);
