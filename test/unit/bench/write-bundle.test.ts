/**
 * `npm run bench` writes each bundle whole or not at all: a process that reads the bundle while
 * another run rewrites it (the hostile bench starts its upstream MCP server from its own bundle)
 * sees the old file or the new one, never an empty or cut one. A real reader process races a
 * writer that alternates two 4 MB versions, until the reader has read at least
 * {@link MIN_READS} times (a count the test waits for, not one a busy machine could miss).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- plain ESM without declarations, run by bench/run.mjs
import { writeFileAtomically } from '../../../bench/write-bundle.mjs';

const dir = mkdtempSync(join(tmpdir(), 'codecall-bench-write-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SIZE = 4 * 1_048_576;
const MIN_READS = 50;
const MIN_WRITES = 300;

const READER = `
import { readFileSync } from 'node:fs';
const [file, size] = [process.argv[1], Number(process.argv[2])];
let reads = 0, torn = 0;
process.stdout.write('ready\\n');
process.stdin.on('data', () => {
  console.log(JSON.stringify({ reads, torn }));
  process.exit(0);
});
const loop = () => {
  for (let i = 0; i < 20; i++) {
    let text;
    try { text = readFileSync(file, 'latin1'); } catch { torn++; continue; }
    reads++;
    if (text.length !== size || (text[0] !== text[size - 1])) torn++;
  }
  process.stdout.write('reads ' + reads + '\\n');
  setImmediate(loop);
};
loop();
`;

describe('writeFileAtomically', () => {
  it('never lets a concurrent reader see a partly written bundle', async () => {
    const file = join(dir, 'bundle.mjs');
    const versions = [Buffer.alloc(SIZE, 'a'), Buffer.alloc(SIZE, 'b')];
    (writeFileAtomically as (path: string, contents: Uint8Array) => void)(file, versions[0]!);
    const reader = spawn(process.execPath, ['--input-type=module', '-e', READER, file, String(SIZE)], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let output = '';
    let readsSoFar = 0;
    reader.stdout.setEncoding('utf8');
    await new Promise<void>((resolve) =>
      reader.stdout.on('data', (chunk: string) => {
        output += chunk;
        for (const [, count] of chunk.matchAll(/reads (\d+)/g)) readsSoFar = Number(count);
        if (output.includes('ready\n')) resolve();
      }),
    );
    // Writes go on until the reader has raced them enough times, however busy the machine.
    for (let i = 0; i < MIN_WRITES || (readsSoFar < MIN_READS && reader.exitCode === null); i++) {
      (writeFileAtomically as (path: string, contents: Uint8Array) => void)(file, versions[i % 2]!);
      await new Promise((resolve) => setImmediate(resolve));
    }
    reader.stdin.write('done\n');
    await new Promise((resolve) => reader.once('exit', resolve));
    const { reads, torn } = JSON.parse(output.slice(output.lastIndexOf('{'))) as {
      reads: number;
      torn: number;
    };
    expect(reads).toBeGreaterThanOrEqual(MIN_READS);
    expect(torn).toBe(0);
  }, 120_000);
});
