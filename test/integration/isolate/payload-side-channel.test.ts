/**
 * @module
 * Large tool results in process mode travel on the payload side channel (raw UTF-8 frames on a
 * socket pair), real worker processes: they reach the script whole and in the order of their
 * answers among small ones that travel inside IPC messages, multi-byte text included; frames
 * large enough for the kept buffer, several in flight at once and one after another, each
 * arrive as written (none made in a buffer another frame is still being written from); a worker
 * killed while a frame is being written ends its run as a crash without harming the host, and
 * the pool's next run works.
 */
import { afterEach, describe, expect, it } from 'vitest';

import { SandboxPool } from '../../../src/isolate/index.js';
import { KEPT_BUFFER_MIN_BYTES, SIDE_CHANNEL_MIN_CHARS } from '../../../src/isolate/payload-channel.js';
import { runScript } from '../../unit/isolate/sandbox-helpers.js';

/** A result whose JSON is over the side channel's threshold, mostly two-byte UTF-8 characters. */
const bigResult = (tag: number) => ({ tag, text: `${'é'.repeat(SIDE_CHANNEL_MIN_CHARS)}|${tag}|` });
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('process mode: the payload side channel', () => {
  let pool: SandboxPool | undefined;
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
  });

  it('delivers large results whole and in answer order beside small ones', async () => {
    pool = await SandboxPool.open({ mode: 'process', workers: 1 });
    const result = await runScript(
      pool,
      `const show = (r) => r.tag + ':' + r.text.length + ':' + r.text.slice(-3) + ':' + (r.text.slice(0, 2) === 'éé');
       const [a, b, c, d] = await Promise.all([tools.t.big({ tag: 1, ms: 30 }), tools.t.small({}), tools.t.big({ tag: 2, ms: 0 }), tools.t.big({ tag: 3, ms: 0 })]);
       console.log(show(a), b, show(c), show(d));
       console.log(show(await tools.t.big({ tag: 4, ms: 0 })), await tools.t.small({}));`,
      {
        tools: {
          't.big': async ({ tag, ms }) => {
            await delay(ms as number);
            return bigResult(tag as number);
          },
          't.small': () => 'small',
        },
      },
    );
    expect(result.error).toBeUndefined();
    const length = SIDE_CHANNEL_MIN_CHARS + 3;
    expect(result.stdout).toBe(
      `1:${length}:|1|:true small 2:${length}:|2|:true 3:${length}:|3|:true\n4:${length}:|4|:true small\n`,
    );
  });

  it('delivers frames made in the kept buffer intact, several in flight at once and one after another', async () => {
    pool = await SandboxPool.open({ mode: 'process', workers: 1 });
    // Each result is one letter repeated: its frame is over KEPT_BUFFER_MIN_BYTES, so the first
    // of a batch is made in the kept buffer and the others, while it is written, in fresh ones.
    const chars = Math.ceil(KEPT_BUFFER_MIN_BYTES / 3) + 1_000;
    const result = await runScript(
      pool,
      `const check = (text, letter) => text.length === ${chars} && text === letter.repeat(${chars}) ? letter : 'corrupt ' + letter;
       const batch = await Promise.all(['a', 'b', 'c', 'd'].map((letter) => tools.t.letters({ letter })));
       const out = batch.map((text, index) => check(text, 'abcd'[index]));
       for (const letter of ['e', 'f', 'g']) out.push(check(await tools.t.letters({ letter }), letter));
       console.log(out.join(''));`,
      { tools: { 't.letters': ({ letter }) => (letter as string).repeat(chars) } },
    );
    expect(result.error).toBeUndefined();
    expect(result.stdout).toBe('abcdefg\n');
  });

  it('ends the run as a crash when the worker dies mid-frame, and the next run works', async () => {
    const pids: number[] = [];
    pool = await SandboxPool.open({
      mode: 'process',
      workers: 1,
      onWorkerEvent: (event) => {
        if (event.type === 'started') pids.push(event.pid);
      },
    });
    const killed = await runScript(pool, 'const r = await tools.t.huge({}); console.log(r.length);', {
      tools: {
        't.huge': () => {
          // Killed once the answer has started out: most of its 20 MB frame is still queued.
          setImmediate(() => process.kill(pids[0]!, 'SIGKILL'));
          return 'x'.repeat(20_000_000);
        },
      },
    });
    expect(killed.status).toBe('error');
    expect(killed.error?.code).toBe('SANDBOX_CRASHED');
    const next = await runScript(pool, 'console.log((await tools.t.big({ tag: 5 })).tag);', {
      tools: { 't.big': ({ tag }) => bigResult(tag as number) },
    });
    expect(next.stdout).toBe('5\n');
    expect(pids.length).toBe(2);
  });
});
