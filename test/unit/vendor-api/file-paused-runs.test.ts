/**
 * The folder of paused vendor scripts (`serve.vendorJournalDir`) is bounded like the memory store:
 * past the count the oldest run is removed, and a periodic sweep removes journals idle past the
 * TTL, including ones another process left there (the folder is shared).
 */
import { mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { newRunId } from '../../../src/vendor-api/container-token.js';
import { FilePausedRuns } from '../../../src/vendor-api/paused-runs.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-paused-'));
  dirs.push(dir);
  return dir;
}

const HEADER = { type: 'run', codeHash: 'c0de', at: 1 } as const;

/** Pauses one run: opens it new, writes its header, releases it. */
async function pause(runs: FilePausedRuns, runId: string, expiresAt = Date.now() + 60_000): Promise<void> {
  const opened = await runs.open(runId, { create: true, expiresAt });
  await opened!.journal.append(HEADER);
  await opened!.release();
}

const journals = (dir: string): string[] =>
  readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .sort();

describe('FilePausedRuns', () => {
  it('keeps at most maxRuns journals: a new run past it removes the oldest', async () => {
    const dir = folder();
    const runs = new FilePausedRuns(dir, { maxRuns: 3, sweepMs: 3_600_000 });
    const ids = [newRunId(), newRunId(), newRunId(), newRunId(), newRunId()];
    for (const id of ids) await pause(runs, id);

    expect(journals(dir)).toEqual([ids[2], ids[3], ids[4]].map((id) => `${id}.jsonl`).sort());
    expect(await runs.open(ids[0]!, { create: false, expiresAt: Date.now() + 60_000 })).toBeUndefined();
    const kept = await runs.open(ids[4]!, { create: false, expiresAt: Date.now() + 60_000 });
    expect(await kept!.journal.entries()).toEqual([HEADER]);
    await kept!.release();
  });

  it('counts the runs another process left in the folder (read at the sweep) against the bound', async () => {
    const dir = folder();
    const before = [newRunId(), newRunId()];
    await pause(new FilePausedRuns(dir), before[0]!);
    await pause(new FilePausedRuns(dir), before[1]!);

    const runs = new FilePausedRuns(dir, { maxRuns: 2, sweepMs: 3_600_000 });
    const fresh = newRunId();
    await pause(runs, fresh);
    expect(journals(dir)).toHaveLength(2);
    expect(journals(dir)).toContain(`${fresh}.jsonl`);
  });

  it('sweeps journals idle past the TTL, whoever wrote them, and keeps the others', async () => {
    const dir = folder();
    const stale = newRunId();
    const live = newRunId();
    writeFileSync(join(dir, `${stale}.jsonl`), `${JSON.stringify(HEADER)}\n`);
    writeFileSync(join(dir, `${live}.jsonl`), `${JSON.stringify(HEADER)}\n`);
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, `${stale}.jsonl`), hourAgo, hourAgo);
    // Not a journal of this store: never touched.
    writeFileSync(join(dir, 'notes.txt'), 'keep me');
    utimesSync(join(dir, 'notes.txt'), hourAgo, hourAgo);

    const runs = new FilePausedRuns(dir, { ttlMs: 60_000, sweepMs: 0 });
    await pause(runs, newRunId());

    expect(readdirSync(dir)).not.toContain(`${stale}.jsonl`);
    expect(readdirSync(dir)).toContain(`${live}.jsonl`);
    expect(readdirSync(dir)).toContain('notes.txt');
    expect(await runs.open(stale, { create: false, expiresAt: Date.now() + 60_000 })).toBeUndefined();
  });

  it('reads the folder at most once per sweepMs, not once per request', async () => {
    const dir = folder();
    const runs = new FilePausedRuns(dir, { ttlMs: 60_000, sweepMs: 3_600_000 });
    await pause(runs, newRunId());
    // Left stale after the first sweep: the next requests within sweepMs do not read the folder.
    const stale = newRunId();
    writeFileSync(join(dir, `${stale}.jsonl`), `${JSON.stringify(HEADER)}\n`);
    const hourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, `${stale}.jsonl`), hourAgo, hourAgo);
    await pause(runs, newRunId());
    await pause(runs, newRunId());
    expect(readdirSync(dir)).toContain(`${stale}.jsonl`);
  });

  it('renews a resumed run on release: a turn that writes nothing still moves its expiry', async () => {
    const dir = folder();
    const id = newRunId();
    const other = new FilePausedRuns(dir, { ttlMs: 60_000, sweepMs: 3_600_000 });
    await pause(other, id); // `other` read the folder here, and not again for an hour
    const hourAgo = new Date(Date.now() - 3_600_000);
    const opened = await other.open(id, { create: false, expiresAt: Date.now() + 60_000 });
    utimesSync(join(dir, `${id}.jsonl`), hourAgo, hourAgo);
    await opened!.release();

    await pause(new FilePausedRuns(dir, { ttlMs: 60_000, sweepMs: 0 }), newRunId());
    expect(readdirSync(dir)).toContain(`${id}.jsonl`);
  });
});
