/**
 * @module
 * `codecall eval-search` end to end on self-made JSON Lines files, through the command object
 * main() dispatches to (in-process: no dist/ build needed).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError, type CliIo } from '../../src/cli/command.js';
import { evalSearchCommand } from '../../src/cli/commands/eval-search.js';
import { main } from '../../src/cli/main.js';
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

function io(): { io: CliIo; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    io: { stdout, stderr, stdin: new PassThrough(), cwd: dir, env: {}, signal: new AbortController().signal },
    out: () => out,
    err: () => err,
  };
}

describe('codecall eval-search', () => {
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
    expect(await main(['eval-search', '--help'], help.io)).toBe(0);
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
    expect(
      await main(['eval-search', '--tools', 'tools.jsonl', '--test', 'test.jsonl', '--bogus'], bad.io),
    ).toBe(2);
  });

  it('names the file and line of broken data', async () => {
    const t = io();
    expect(await main(['eval-search', '--tools', 'broken.jsonl', '--test', 'test.jsonl'], t.io)).toBe(2);
    expect(t.err()).toMatch(/broken\.jsonl:2: not valid JSON/);
    const missing = io();
    expect(await main(['eval-search', '--tools', 'nope.jsonl', '--test', 'test.jsonl'], missing.io)).toBe(2);
    expect(missing.err()).toMatch(/Cannot read the tools file .*nope\.jsonl/);
  });
});
