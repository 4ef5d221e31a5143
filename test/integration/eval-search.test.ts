/**
 * @module
 * `npm run eval-search` (scripts/eval-search.ts, a developer tool that left the user CLI) end to
 * end on self-made JSON Lines files: in-process through the command object the script runs, and
 * once as the script itself under plain Node.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError, type CliIo } from '../../src/cli/command.js';
import { main } from '../../src/cli/main.js';
import { evalSearchCommand, runEvalSearch } from '../../scripts/eval-search/command.js';
import { CATALOG } from '../unit/search/catalog.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-eval-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const jsonl = (rows: unknown[]): string => rows.map((r) => JSON.stringify(r)).join('\n') + '\n';
writeFileSync(join(dir, 'tools.jsonl'), jsonl(CATALOG));
const chains = [
  {
    id: '1',
    query: 'members of a team and their expenses',
    tools: ['hr.get_team_members', 'finance.get_expenses'],
  },
  { id: '2', query: 'post to a chat channel', tools: ['chat.list_channels', 'chat.send_message'] },
  { id: '3', query: 'copy a file', tools: ['files.read_file', 'files.write_file'] },
];
writeFileSync(join(dir, 'train.jsonl'), jsonl([...chains, ...chains, ...chains, ...chains]));
writeFileSync(join(dir, 'test.jsonl'), jsonl(chains));
writeFileSync(join(dir, 'broken.jsonl'), '{"name": "a"}\n{oops\n');

// A data folder in the layout of ../shared/data: <name>/tools.jsonl with train.jsonl or dev.jsonl.
mkdirSync(join(dir, 'data', 'mini'), { recursive: true });
writeFileSync(join(dir, 'data', 'mini', 'tools.jsonl'), jsonl(CATALOG));
writeFileSync(join(dir, 'data', 'mini', 'train.jsonl'), jsonl([...chains, ...chains, ...chains, ...chains]));
mkdirSync(join(dir, 'data', 'devset'), { recursive: true });
writeFileSync(join(dir, 'data', 'devset', 'tools.jsonl'), jsonl(CATALOG));
writeFileSync(join(dir, 'data', 'devset', 'dev.jsonl'), jsonl([...chains, ...chains]));

// Queries that only a stemmer answers: "run" meets "running" (light and Porter), "connect" meets
// "connections" (Porter only).
mkdirSync(join(dir, 'data', 'stems'), { recursive: true });
writeFileSync(
  join(dir, 'data', 'stems', 'tools.jsonl'),
  jsonl([
    { name: 'jobs.status', description: 'Status of running jobs.' },
    { name: 'jobs.connections', description: 'Open connections.' },
  ]),
);
const stemQueries = [
  { id: 'r', query: 'run', tools: ['jobs.status'] },
  { id: 'c', query: 'connect', tools: ['jobs.connections'] },
];
writeFileSync(join(dir, 'data', 'stems', 'train.jsonl'), jsonl([...stemQueries, ...stemQueries]));

function io(env: Record<string, string> = {}): { io: CliIo; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    io: { stdout, stderr, stdin: new PassThrough(), cwd: dir, env, signal: new AbortController().signal },
    out: () => out,
    err: () => err,
  };
}

describe('npm run eval-search', () => {
  it('prints BM25, +graph and +feedback side by side', async () => {
    const t = io();
    const code = await evalSearchCommand.run(
      ['--tools', 'tools.jsonl', '--test', 'test.jsonl', '--train', 'train.jsonl'],
      t.io,
    );
    expect(code).toBe(0);
    expect(t.out()).toMatch(/3 queries, 8 tools \(learned from 12 chains and 0 queries\)/);
    expect(t.out()).toMatch(/metric\s+BM25\s+\+graph\s+\+feedback\s+change/);
    expect(t.out()).toMatch(/Completeness@5\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[+-][\d.]+/);
  });

  it('learns query feedback from --train-queries: words no tool has find the tools they led to', async () => {
    const asked = {
      id: 'q',
      query: 'coworkers outlays',
      tools: ['hr.get_team_members', 'finance.get_expenses'],
    };
    writeFileSync(join(dir, 'asked.jsonl'), jsonl([asked, asked, asked]));
    writeFileSync(join(dir, 'ask.jsonl'), jsonl([{ ...asked, id: 'test' }]));
    const t = io();
    const code = await evalSearchCommand.run(
      [
        '--tools',
        'tools.jsonl',
        '--test',
        'ask.jsonl',
        '--train-queries',
        'asked.jsonl',
        '--k',
        '2',
        '--json',
      ],
      t.io,
    );
    expect(code).toBe(0);
    const result = JSON.parse(t.out());
    expect(result).toMatchObject({ trainUsages: 3, queries: 1 });
    expect(result.bm25.completeness['2']).toBe(0);
    expect(result.graph.recall['2']).toBe(0);
    expect(result.hybrid.completeness['2']).toBe(1);
  });

  it('prints JSON and cross-validates one file with --folds', async () => {
    const t = io();
    const code = await evalSearchCommand.run(
      ['--tools', 'tools.jsonl', '--train', 'train.jsonl', '--folds', '3', '--k', '2,3', '--json'],
      t.io,
    );
    expect(code).toBe(0);
    const result = JSON.parse(t.out());
    expect(result).toMatchObject({ tools: 8, queries: 12, folds: 3, ks: [2, 3] });
    // Each chain appears four times: the other folds teach it, so the graph completes it.
    expect(result.hybrid.completeness['2']).toBe(1);
    expect(result.hybrid.completeness['2']).toBeGreaterThanOrEqual(result.bm25.completeness['2']);
    expect(t.err()).toMatch(/fold 3\/3 done/);
  });

  it('answers --help and rejects bad usage with a fix', async () => {
    const help = io();
    expect(await runEvalSearch(['--help'], help.io)).toBe(0);
    expect(help.out()).toMatch(/--folds <n>/);
    await expect(evalSearchCommand.run([], io().io)).rejects.toThrow(UsageError);
    await expect(evalSearchCommand.run(['--tools', 'tools.jsonl'], io().io)).rejects.toThrow(/--test/);
    await expect(
      evalSearchCommand.run(['--tools', 'tools.jsonl', '--test', 'test.jsonl', '--k', 'five'], io().io),
    ).rejects.toThrow(/--k must be an integer/);
    await expect(
      evalSearchCommand.run(
        ['--tools', 'tools.jsonl', '--test', 'train.jsonl', '--train', 'train.jsonl'],
        io().io,
      ),
    ).rejects.toThrow(/--folds/);
    const bad = io();
    expect(await runEvalSearch(['--tools', 'tools.jsonl', '--test', 'test.jsonl', '--bogus'], bad.io)).toBe(
      2,
    );
  });

  it('runs a named data set from --data-dir or CODECALL_DATA_DIR, cross-validated 5-fold', async () => {
    const viaFlag = io();
    expect(
      await evalSearchCommand.run(['--dataset', 'mini', '--data-dir', 'data', '--json'], viaFlag.io),
    ).toBe(0);
    expect(JSON.parse(viaFlag.out())).toMatchObject({ tools: 8, queries: 12, folds: 5 });
    // dev.jsonl is both the test and the training set; the environment names the folder.
    const viaEnv = io({ CODECALL_DATA_DIR: join(dir, 'data') });
    expect(await evalSearchCommand.run(['--dataset', 'devset', '--folds', '3', '--json'], viaEnv.io)).toBe(0);
    expect(JSON.parse(viaEnv.out())).toMatchObject({ queries: 6, folds: 3 });
    const missing = io({ CODECALL_DATA_DIR: join(dir, 'nowhere') });
    expect(await runEvalSearch(['--dataset', 'mini'], missing.io)).toBe(2);
    expect(missing.err()).toContain(`${join(dir, 'nowhere', 'mini', 'tools.jsonl')} is missing`);
    expect(missing.err()).toContain('CODECALL_DATA_DIR');
    await expect(evalSearchCommand.run(['--dataset', '../etc'], io().io)).rejects.toThrow(/folder name/);
    await expect(
      evalSearchCommand.run(['--dataset', 'mini', '--tools', 'tools.jsonl'], io().io),
    ).rejects.toThrow(/one or the other/);
  });

  it('passes the lexical variants to every fold and prints the field weights it learned', async () => {
    const base = ['--dataset', 'mini', '--data-dir', 'data', '--folds', '2'];
    const t = io();
    expect(
      await evalSearchCommand.run(
        [
          ...base,
          '--stemming',
          'porter',
          '--verb-normalization',
          '--expansion-docs',
          '2',
          '--field-weights',
          'name=2,server=1',
          '--json',
        ],
        t.io,
      ),
    ).toBe(0);
    const recall = async (...flags: string[]): Promise<number> => {
      const run = io();
      expect(
        await evalSearchCommand.run(
          ['--dataset', 'stems', '--data-dir', 'data', '--folds', '2', '--k', '1', '--json', ...flags],
          run.io,
        ),
      ).toBe(0);
      return JSON.parse(run.out()).bm25.recall['1'] as number;
    };
    expect(await recall()).toBe(0.5);
    expect(await recall('--stemming', 'none')).toBe(0);
    expect(await recall('--stemming', 'porter')).toBe(1);
    expect(JSON.parse(t.out()).index).toEqual({
      stemming: 'porter',
      verbNormalization: true,
      fieldWeights: { name: 2, server: 1 },
    });
    const learned = io();
    expect(await evalSearchCommand.run([...base, '--learn-field-weights'], learned.io)).toBe(0);
    expect(learned.out()).toMatch(
      /fold 1: field weights learned on its training queries: name=[\d.]+,server=/,
    );
    expect(learned.out()).toMatch(/fold 2: field weights learned/);
    await expect(evalSearchCommand.run([...base, '--stemming', 'snowball'], io().io)).rejects.toThrow(
      /--stemming must be light, porter or none/,
    );
    await expect(evalSearchCommand.run([...base, '--field-weights', 'title=2'], io().io)).rejects.toThrow(
      /--field-weights takes field=weight pairs/,
    );
  });

  it('names the file and line of broken data', async () => {
    const t = io();
    expect(await runEvalSearch(['--tools', 'broken.jsonl', '--test', 'test.jsonl'], t.io)).toBe(2);
    expect(t.err()).toMatch(/broken\.jsonl:2: not valid JSON/);
    const missing = io();
    expect(await runEvalSearch(['--tools', 'nope.jsonl', '--test', 'test.jsonl'], missing.io)).toBe(2);
    expect(missing.err()).toMatch(/Cannot read the tools file .*nope\.jsonl/);
  });

  it('runs as `npm run eval-search` from the sources, and is no longer a codecall command', async () => {
    const script = join(import.meta.dirname, '../../scripts/eval-search.ts');
    const run = spawnSync(
      process.execPath,
      [script, '--tools', 'tools.jsonl', '--test', 'test.jsonl', '--json'],
      {
        cwd: dir,
        encoding: 'utf8',
      },
    );
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ tools: CATALOG.length });
    const usage = spawnSync(process.execPath, [script, '--bogus'], { cwd: dir, encoding: 'utf8' });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('Usage: npm run eval-search --');

    const moved = io();
    expect(await main(['eval-search', '--dataset', 'mini'], moved.io)).toBe(2);
    expect(moved.err()).toContain('npm run eval-search');
    const help = io();
    expect(await main(['--help'], help.io)).toBe(0);
    expect(help.out()).not.toContain('eval-search');
  });
});
