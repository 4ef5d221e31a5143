/**
 * `setLongTimeout` with real timers (no fake clock): a delay past Node's 2^31 - 1 ms ceiling does
 * not fire at once, a chained delay (a small `maxStepMs` injected) fires once and never early,
 * `cancel` stops it between steps, and an unref'd one does not keep a process alive. Only lower
 * bounds on time are asserted: they hold however loaded the machine is. A timer that must fire is
 * awaited (the test's own timeout bounds it), never expected within a fixed sleep, which a
 * loaded machine can outlast.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { MAX_TIMER_DELAY_MS, setLongTimeout } from '../../../src/util/long-timeout.js';

/** A child still running after this long hangs on a timer: it is killed. */
const CHILD_EXIT_BOUND_MS = 25_000;

const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

describe('setLongTimeout', () => {
  it('does not fire a delay past 2^31 - 1 ms at once (setTimeout would, after 1 ms)', async () => {
    let fired = 0;
    const timers = [MAX_TIMER_DELAY_MS + 1, 2 ** 31, 30 * 86_400_000, Number.MAX_SAFE_INTEGER].map((delay) =>
      setLongTimeout(() => fired++, delay),
    );
    await sleep(200);
    for (const timer of timers) timer.cancel();
    expect(fired).toBe(0);
  });

  it('chains steps no longer than maxStepMs and fires once, never before the delay', async () => {
    const delayMs = 120;
    const started = performance.now();
    const firedAt = await new Promise<number>((done) => {
      setLongTimeout(() => done(performance.now()), delayMs, { maxStepMs: 7 });
    });
    expect(firedAt - started).toBeGreaterThanOrEqual(delayMs);
    // A step that fired the callback early would have been caught above; a second firing here.
    let again = 0;
    let firedOnce!: () => void;
    const fired = new Promise<void>((done) => (firedOnce = done));
    const timer = setLongTimeout(
      () => {
        again++;
        firedOnce();
      },
      30,
      { maxStepMs: 7 },
    );
    await fired;
    // Several more steps' worth of time: a chain that went on would fire again.
    await sleep(100);
    timer.cancel();
    expect(again).toBe(1);
  });

  it('cancel stops a chained timer between steps, and is idempotent', async () => {
    // Cancelled after some steps and before its delay: a loaded machine may sleep past the delay
    // before the cancel, which then proves nothing, so such a try is made again (a few times at
    // most).
    const delayMs = 200;
    for (let attempt = 1; ; attempt++) {
      let fired = 0;
      const started = performance.now();
      const timer = setLongTimeout(() => fired++, delayMs, { maxStepMs: 5 });
      await sleep(20);
      const cancelledAt = performance.now() - started;
      timer.cancel();
      timer.cancel();
      if (cancelledAt >= delayMs && attempt < 5) continue;
      expect(cancelledAt, 'cancelled before the delay').toBeLessThan(delayMs);
      // Past the delay, and more steps' worth: a chain still running would have fired.
      await sleep(delayMs + 100);
      expect(fired).toBe(0);
      return;
    }
  });

  it('fires a zero, negative or NaN delay soon, and never an infinite one', async () => {
    const fired: string[] = [];
    const firing = (name: string): Promise<void> =>
      new Promise((done) =>
        setLongTimeout(
          () => {
            fired.push(name);
            done();
          },
          name === 'zero' ? 0 : name === 'negative' ? -5 : Number.NaN,
        ),
      );
    const never = setLongTimeout(() => fired.push('infinite'), Number.POSITIVE_INFINITY);
    // Awaited, not expected within a fixed time: "soon" is a timer's next turn, however late.
    await Promise.all(['zero', 'negative', 'nan'].map(firing));
    await sleep(50);
    never.cancel();
    expect(fired.sort()).toEqual(['nan', 'negative', 'zero']);
  });

  it('an unref timer, chained or not, does not keep the process alive', async () => {
    // The build of the suite's global setup (a child cannot import the TypeScript source).
    const helper = resolve(import.meta.dirname, '../../../dist/util/long-timeout.js');
    const code = `
      const { setLongTimeout } = await import(${JSON.stringify(pathToFileURL(helper).href)});
      setLongTimeout(() => process.exit(3), 2 ** 40, { unref: true });
      setLongTimeout(() => process.exit(4), 60_000, { unref: true, maxStepMs: 5 });`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: 'ignore' });
    // A hung child is killed past this bound (it fails the test; no time is asserted).
    const guard = setTimeout(() => child.kill('SIGKILL'), CHILD_EXIT_BOUND_MS);
    try {
      const exit = await new Promise<number | null>((done) => child.once('exit', (status) => done(status)));
      expect(exit).toBe(0);
    } finally {
      clearTimeout(guard);
    }
  });
});
