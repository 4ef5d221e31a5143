/**
 * @module
 * Console output past both stream budgets costs O(1) memory: a script that exhausts stdout and
 * stderr and then alternates `console.log("")` / `console.error("")` in a loop must not grow its
 * sandbox worker (nor, in-process, the host) by a record per call. Each mode runs against a real
 * pool and measures the peak resident memory of this process and of the worker (Linux `/proc`:
 * the peak is reset through `clear_refs` before the run).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SandboxPool, type SandboxMode } from '../../../src/isolate/index.js';
import { runScript } from './sandbox-helpers.js';

const hasProc = existsSync('/proc/self/clear_refs');

/** Alternations of the loop: 2M console calls, a few seconds on an idle core. */
const ALTERNATIONS = 1_000_000;
/** Growth the loop may cost; one kept record per call is over 150 MB here. */
const MAX_GROWTH_MB = 100;

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

/** How far the peak resident memory of this process and of its workers rose during `body`, in MB. */
async function peakGrowthMb<T>(
  body: () => Promise<T>,
): Promise<{ value: T; hostMb: number; workerMb: number; workers: number }> {
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
    const grown = (statusKb(pid, 'VmHWM') - before.get(pid)!) / 1024;
    if (pid === 'self') hostMb = grown;
    else workerMb = Math.max(workerMb, grown);
  }
  return { value, hostMb, workerMb, workers: pids.length - 1 };
}

describe.runIf(hasProc).each<SandboxMode>(['in-process', 'process'])(
  'console output past both budgets (%s)',
  (mode) => {
    let pool: SandboxPool;
    beforeAll(async () => {
      pool = await SandboxPool.open({
        mode,
        workers: 1,
        limits: { memoryMb: 64, cpuTimeMs: 120_000, wallTimeMs: 120_000 },
      });
      // A first run, so that lazy start-up work is not counted below.
      await runScript(pool, 'console.log(1);');
    });
    afterAll(async () => {
      await pool.close();
    });

    it('counts dropped writes without keeping a record per call', { timeout: 180_000 }, async () => {
      const {
        value: result,
        hostMb,
        workerMb,
        workers,
      } = await peakGrowthMb(() =>
        runScript(
          pool,
          `console.log('o'.repeat(100));
           console.error('e'.repeat(100));
           for (let i = 0; i < ${ALTERNATIONS}; i++) { console.log(''); console.error(''); }
           return 'done';`,
          { limits: { maxStdoutBytes: 64, maxStderrBytes: 64 } },
        ),
      );
      expect(result.status).toBe('ok');
      expect(result.returnValue).toBe('done');
      // Every dropped newline is counted: 101 bytes of the first line plus one per empty line.
      const total = 101 + ALTERNATIONS;
      expect(result.stdout).toBe(
        `${'o'.repeat(64)}\n[output truncated: 64 of ${total} bytes shown — print less: aggregate, slice, or select fields]\n`,
      );
      expect(result.stderr).toBe(
        `${'e'.repeat(64)}\n[output truncated: 64 of ${total} bytes shown — print less: aggregate, slice, or select fields]\n`,
      );
      if (mode === 'process') {
        expect(workers).toBe(1);
        expect(workerMb).toBeLessThan(MAX_GROWTH_MB);
      }
      expect(hostMb).toBeLessThan(MAX_GROWTH_MB);
    });
  },
);
