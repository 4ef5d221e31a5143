import { describe, expect, it } from 'vitest';
import { CallsInFlight, MemoryRunJournal, type RunJournalEntry } from '../../../src/store/index.js';

const started = (index: number, name = 'files.read', argsHash = 'h1'): RunJournalEntry => ({
  type: 'started',
  index,
  name,
  argsHash,
  args: {},
  at: 0,
});
const finished = (index: number, name = 'files.read', argsHash = 'h1'): RunJournalEntry => ({
  type: 'finished',
  index,
  name,
  argsHash,
  ok: true,
  result: null,
  at: 0,
});

describe('CallsInFlight', () => {
  it('writes every entry through to the journal it wraps, in order', async () => {
    const inner = new MemoryRunJournal();
    const calls = new CallsInFlight(inner);
    await calls.append({ type: 'run', codeHash: 'c', at: 0 });
    await calls.append(started(0));
    await calls.append(finished(0));
    expect((await inner.entries()).map((entry) => entry.type)).toEqual(['run', 'started', 'finished']);
    expect(await calls.entries()).toEqual(await inner.entries());
  });

  it('claims identical calls in flight oldest first, each once, and forgets finished ones', async () => {
    const calls = new CallsInFlight(new MemoryRunJournal());
    await calls.append(started(0));
    await calls.append(started(1, 'files.write'));
    await calls.append(started(2));
    expect(calls.latest('files.read', 'h1')).toBe(2);
    expect(calls.claim('files.read', 'h1')).toBe(0);
    expect(calls.claim('files.read', 'h1')).toBe(2);
    expect(calls.claim('files.read', 'h1')).toBeUndefined();
    expect(calls.claim('files.read', 'other')).toBeUndefined();
    expect(calls.claim('files.write', 'h1')).toBe(1);
    await calls.append(finished(2));
    expect(calls.latest('files.read', 'h1')).toBe(0);
    await calls.append(finished(0));
    expect(calls.latest('files.read', 'h1')).toBeUndefined();
    await calls.append(started(3));
    expect(calls.claim('files.read', 'h1')).toBe(3);
  });
});
