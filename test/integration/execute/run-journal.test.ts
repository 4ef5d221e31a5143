/**
 * The run journal through the library: a real runtime (in-process sandbox) over a real MCP
 * server linked in memory that counts every call, and the two journals codecall ships (the
 * fsynced file, memory). What the replay answers from the journal never reaches the server.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CodecallError } from '../../../src/errors.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import {
  FileRunJournal,
  hashArgs,
  hashCode,
  MemoryRunJournal,
  type RunJournal,
  type RunJournalEntry,
} from '../../../src/store/index.js';
import { inMemoryTransport } from '../../../src/testing/servers/index.js';

const calls = new Map<string, number>();
/** Told after every call the server receives. */
const onCall = new Set<() => void>();
const callsOf = (id: string): number => calls.get(id) ?? 0;

function createCounter(): McpServer {
  const server = new McpServer({ name: 'counter', version: '1.0.0' });
  server.registerTool(
    'bump',
    {
      description: 'Counts a side effect for id; fails for ids starting with "fail".',
      inputSchema: { id: z.string() },
    },
    ({ id }) => {
      const n = callsOf(id) + 1;
      calls.set(id, n);
      for (const listener of [...onCall]) listener();
      if (id.startsWith('fail'))
        return { isError: true, content: [{ type: 'text', text: `cannot bump ${id}` }] };
      return { content: [{ type: 'text', text: JSON.stringify({ id, n }) }] };
    },
  );
  return server;
}

const dir = mkdtempSync(join(tmpdir(), 'codecall-run-journal-'));
let runtime: CodecallRuntime;

beforeAll(async () => {
  const config = join(dir, 'codecall.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {},
      sandbox: { mode: 'in-process', memoryMb: 64 },
      history: { enabled: false },
    }),
  );
  runtime = await CodecallRuntime.open({
    load: { path: config },
    tools: { transports: { counter: inMemoryTransport(createCounter) } },
    history: false,
  });
});

afterAll(async () => {
  await runtime?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function rejection(promise: Promise<unknown>): Promise<CodecallError> {
  try {
    await promise;
  } catch (error) {
    if (CodecallError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a CodecallError');
}

describe('run journal and replay (library)', () => {
  it('replays results and errors, concurrent calls included, without calling the server again', async () => {
    const source = `
      const [a, b] = await Promise.all([tools.counter.bump({ id: 'p-a' }), tools.counter.bump({ id: 'p-b' })]);
      let failed = '';
      try { await tools.counter.bump({ id: 'fail-p' }); } catch (error) { failed = error.message; }
      const again = await tools.counter.bump({ id: 'p-a' });
      console.log(a.n, b.n, again.n, failed);`;
    await using journal = await FileRunJournal.open(join(dir, 'replay.jsonl'));
    const first = await runtime.execute(source, { journal });
    expect(first.status, JSON.stringify(first.error)).toBe('ok');
    const printed = first.stdout;
    expect(printed).toMatch(/^1 1 2 .*cannot bump fail-p/);
    const before = new Map(calls);

    const replayed = await runtime.execute(source, { journal, replay: true });
    expect(replayed.status).toBe('ok');
    expect(replayed.stdout).toBe(printed);
    expect(calls).toEqual(before);
    // Nothing was appended: every call was answered from the journal.
    const entries = await journal.entries();
    expect(entries.filter((e) => e.type === 'finished')).toHaveLength(4);
    expect(entries.filter((e) => e.type === 'started')).toHaveLength(4);
  });

  it('matches replayed calls by name and arguments, not by name alone', async () => {
    const source = `
      const x = await tools.counter.bump({ id: 'm-x' });
      const y = await tools.counter.bump({ id: 'm-y' });
      console.log(x.id, x.n, y.id, y.n);`;
    /** A journal of the same script whose calls were written in the other order. */
    const swapped = async (ids: string[]): Promise<MemoryRunJournal> => {
      const journal = new MemoryRunJournal();
      await journal.append({ type: 'run', codeHash: hashCode(source), at: 1 });
      for (const [index, id] of ids.entries()) {
        const args = { id };
        const argsHash = hashArgs(args);
        const name = 'counter.bump';
        await journal.append({ type: 'started', index, name, argsHash, args, at: 2 });
        const result = { id, n: 10 + index };
        await journal.append({ type: 'finished', index, name, argsHash, ok: true, result, at: 3 });
      }
      return journal;
    };
    const before = new Map(calls);
    const replayed = await runtime.execute(source, { journal: await swapped(['m-y', 'm-x']), replay: true });
    expect(replayed.status, JSON.stringify(replayed.error)).toBe('ok');
    // Each call gets the answer journaled for its own arguments, whatever the journal's order.
    expect(replayed.stdout).toBe('m-x 11 m-y 10\n');
    expect(calls).toEqual(before);
    // A call with arguments the journal lacks diverges, though the journal has calls of that tool.
    const diverged = await rejection(
      runtime.execute(source, { journal: await swapped(['m-y', 'm-z']), replay: true }),
    );
    expect(diverged.code).toBe('REPLAY_DIVERGED');
    expect(calls).toEqual(before);
  });

  it('records a call before its result reaches the script', async () => {
    // A slow journal: the first result's entry becomes durable only once the server is asked for
    // the second call (what a journal that does not hold the result back would let happen), or
    // after SLOW_APPEND_MS otherwise. The server notes whether it was durable by then.
    const SLOW_APPEND_MS = 2_000;
    let durable = false;
    let durableWhenSecondCalled: boolean | undefined;
    const inner = new MemoryRunJournal();
    const slow: RunJournal = {
      async append(entry: RunJournalEntry) {
        await inner.append(entry);
        if (entry.type !== 'finished' || entry.index !== 0) return;
        await new Promise<void>((resolveSlow) => {
          const timer = setTimeout(resolveSlow, SLOW_APPEND_MS);
          onCall.add(() => {
            if (callsOf('o-2') === 0) return;
            clearTimeout(timer);
            resolveSlow();
          });
        });
        durable = true;
      },
      entries: () => inner.entries(),
    };
    onCall.add(() => {
      if (callsOf('o-2') === 1 && durableWhenSecondCalled === undefined) durableWhenSecondCalled = durable;
    });
    const result = await runtime.execute(
      `await tools.counter.bump({ id: 'o-1' }); await tools.counter.bump({ id: 'o-2' }); console.log('done');`,
      { journal: slow },
    );
    onCall.clear();
    expect(result.stdout).toBe('done\n');
    expect(durableWhenSecondCalled).toBe(true);
  });

  it('stops with REPLAY_DIVERGED when the replay ends without making journaled calls', async () => {
    const journal = new MemoryRunJournal();
    const source = `const r = await tools.counter.bump({ id: 'e-1' }); if (r.n === 1) await tools.counter.bump({ id: 'e-2' }); console.log('ok');`;
    expect((await runtime.execute(source, { journal })).stdout).toBe('ok\n');
    // Same script, but a journal whose first answer says n = 2: the replay skips e-2.
    const edited = new MemoryRunJournal();
    for (const entry of await journal.entries()) {
      // The result as the pool returned it, with its count changed wherever it appears.
      const text = JSON.stringify(entry);
      const copy = JSON.parse(
        entry.type === 'finished' && entry.index === 0
          ? text.replaceAll('"n":1', '"n":2').replaceAll('\\"n\\":1', '\\"n\\":2')
          : text,
      ) as RunJournalEntry;
      await edited.append(copy);
    }
    const error = await rejection(runtime.execute(source, { journal: edited, replay: true }));
    expect(error.code).toBe('REPLAY_DIVERGED');
    expect(error.message).toContain('ended without making 1 call(s) the journal has (counter.bump)');
    expect(callsOf('e-1')).toBe(1);
    expect(callsOf('e-2')).toBe(1);
  });

  it('does not make a call it cannot journal (JOURNAL_WRITE_FAILED)', async () => {
    const broken: RunJournal = {
      append: (entry) =>
        entry.type === 'started' ? Promise.reject(new Error('disk full')) : Promise.resolve(),
      entries: () => Promise.resolve([]),
    };
    const error = await rejection(
      runtime.execute(`await tools.counter.bump({ id: 'w-1' });`, { journal: broken }),
    );
    expect(error.code).toBe('JOURNAL_WRITE_FAILED');
    expect(error.message).toContain('could not record the call to counter.bump (disk full)');
    expect(callsOf('w-1')).toBe(0);
  });

  it('refuses replay without a journal', async () => {
    const error = await rejection(
      runtime.execute(`await tools.counter.bump({ id: 'n-1' });`, { replay: true }),
    );
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.details).toMatchObject({ field: 'replay' });
    expect(callsOf('n-1')).toBe(0);
  });

  it('FileRunJournal ignores a torn last line and names a corrupt one', async () => {
    const path = join(dir, 'torn.jsonl');
    writeFileSync(path, '{"type":"run","codeHash":"abc","at":1}\n{"type":"started","index":0,"na');
    {
      await using torn = new FileRunJournal(path);
      expect(await torn.entries()).toEqual([{ type: 'run', codeHash: 'abc', at: 1 }]);
    }
    writeFileSync(path, '{"type":"run","codeHash":"abc","at":1}\n{"type":"started","index":-1}\n');
    {
      await using corrupt = new FileRunJournal(path);
      const error = await rejection(corrupt.entries());
      expect(error.code).toBe('INVALID_ARGUMENT');
      expect(error.message).toContain('Line 2 of the run journal');
      expect(error.message).toContain('"index" is not a non-negative integer');
    }
    await using big = new FileRunJournal(path, { maxBytes: 10 });
    expect((await rejection(big.entries())).message).toMatch(/is \d+ bytes; at most 10 are read/);
  });

  it('refuses a journal whose first entry is not its header, or that holds two runs', async () => {
    const source = `await tools.counter.bump({ id: 'hd-1' });`;
    const args = { id: 'hd-1' };
    const headless = new MemoryRunJournal();
    const call = { index: 0, name: 'counter.bump', argsHash: hashArgs(args), at: 1 };
    await headless.append({ type: 'started', ...call, args });
    await headless.append({ type: 'finished', ...call, ok: true, result: { n: 9 } });
    const error = await rejection(runtime.execute(source, { journal: headless, replay: true }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('has no header line');
    expect(error.details).toMatchObject({ field: 'journal' });

    const twice = new MemoryRunJournal();
    await twice.append({ type: 'run', codeHash: hashCode(source), at: 1 });
    await twice.append({ type: 'run', codeHash: hashCode(source), at: 2 });
    const two = await rejection(runtime.execute(source, { journal: twice, replay: true }));
    expect(two.code).toBe('INVALID_ARGUMENT');
    expect(two.message).toContain('holds 2 runs');
    expect(callsOf('hd-1')).toBe(0);
  });

  it('refuses a fresh run into a journal that holds a run (resume it with replay)', async () => {
    const source = `await tools.counter.bump({ id: 'fr-1' });`;
    const journal = new MemoryRunJournal();
    expect((await runtime.execute(source, { journal })).status).toBe('ok');
    const error = await rejection(runtime.execute(source, { journal }));
    expect(error.code).toBe('INVALID_ARGUMENT');
    expect(error.message).toContain('replay: true');
    expect(callsOf('fr-1')).toBe(1);
  });

  it('FileRunJournal owns its file: a second one is refused until the first closes', async () => {
    const path = join(dir, 'owned.jsonl');
    const owner = await FileRunJournal.open(path);
    await owner.append({ type: 'run', codeHash: 'abc', at: 1 });
    expect(existsSync(`${path}.lock`)).toBe(true);
    const other = new FileRunJournal(path);
    const locked = await rejection(other.entries());
    expect(locked.code).toBe('JOURNAL_LOCKED');
    expect(locked.message).toContain(`in use by process ${process.pid}`);
    expect(locked.details).toMatchObject({ pid: process.pid, path });
    expect((await rejection(FileRunJournal.open(path))).code).toBe('JOURNAL_LOCKED');
    await owner.close();
    await owner.close(); // idempotent
    expect(existsSync(`${path}.lock`)).toBe(false);
    expect((await rejection(owner.entries())).code).toBe('CLOSED');
    // Free now: the refused journal takes it on its next use.
    expect(await other.entries()).toEqual([{ type: 'run', codeHash: 'abc', at: 1 }]);
    await other.close();
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});
