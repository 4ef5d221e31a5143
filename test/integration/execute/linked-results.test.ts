/**
 * A result too large for one MCP message, sent as a file: a real MCP server over stdio
 * (test/fixtures/servers/file-results-server.mjs) writes JSON lines into its data folder and
 * returns a `resource_link` to the file. With that folder in `resultHandles.linkRoots` the
 * script gets a `lines` handle streamed from the file (never read whole), in both sandbox modes.
 * The hostile part: a link outside the roots, through a symbolic link out of them, to a folder,
 * or to a file with a line past `readMaxBytes` never reads what it must not.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallRuntime } from '../../../src/execute/index.js';
import type { SandboxMode } from '../../../src/isolate/index.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const SERVER = join(ROOT, 'test', 'fixtures', 'servers', 'file-results-server.mjs');
const LINES = 50_000;
const READ_MAX_BYTES = 100_000;

const dir = mkdtempSync(join(tmpdir(), 'codecall-linked-'));
const data = join(dir, 'data');
const outside = join(dir, 'outside');
const secret = join(outside, 'secret.jsonl');
const runtimes = new Map<SandboxMode, CodecallRuntime>();

beforeAll(async () => {
  mkdirSync(data);
  mkdirSync(outside);
  mkdirSync(join(data, 'folder'));
  writeFileSync(secret, '{"secret":"do not read"}\n');
  symlinkSync(secret, join(data, 'escape.jsonl'));
  writeFileSync(join(data, 'long.jsonl'), `{"a":1}\n"${'x'.repeat(READ_MAX_BYTES + 10)}"\n`);
  for (const mode of ['in-process', 'process'] as const) {
    const config = join(dir, `${mode}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { f: { command: process.execPath, args: [SERVER, data] } },
        sandbox: { mode, workers: 1 },
        // In-process: the folder comes from the config key (relative to the file's folder);
        // process mode: from the library option.
        ...(mode === 'in-process' ? { resultHandles: { linkRoots: [relative(dir, data)] } } : {}),
      }),
    );
    runtimes.set(
      mode,
      await CodecallRuntime.open({
        load: { path: config },
        history: false,
        resultHandles: {
          ...(mode === 'process' ? { linkRoots: [data] } : {}),
          readMaxBytes: READ_MAX_BYTES,
          chunkBytes: 64_000,
        },
      }),
    );
  }
}, 120_000);

afterAll(async () => {
  for (const runtime of runtimes.values()) await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['in-process', 'process'] as const)('a result linked as a file (%s)', (mode) => {
  const run = (code: string) => runtimes.get(mode)!.execute(code);

  it('is a lines handle streamed from the file: reductions, rows in chunks, the file left in place', async () => {
    const result = await run(`
      const log = await tools.f.export_log({ lines: ${LINES} });
      console.log(log.isHandle, log.kind, log.length, JSON.stringify(log.keys), log.spilled);
      console.log(await log.count({ level: 'error' }), await log.sum('ms'), await log.max('ms'));
      console.log(JSON.stringify(await log.groupBy('level', { sum: 'ms' })));
      let rows = 0, ms = 0;
      for await (const row of log) { rows++; ms += row.ms; }
      console.log(rows, ms, JSON.stringify(await log.slice(${LINES - 2}, ${LINES + 5})));
    `);
    expect(result.error).toBeUndefined();
    // Σ (i % 50) over 50,000 lines: 1,000 rounds of 0 + … + 49 = 1,225 each; the error lines
    // (i % 10 === 0) have ms 0, 10, 20, 30, 40: 100 a round.
    expect(result.stdout).toBe(
      [
        `true lines ${LINES} ["level","ms"] true`,
        '5000 1225000 49',
        '{"error":{"count":5000,"sum":100000},"info":{"count":45000,"sum":1125000}}',
        `${LINES} 1225000 [{"level":"info","ms":48},{"level":"info","ms":49}]`,
        '',
      ].join('\n'),
    );
    // The file is the server's: the run ends without removing it.
    expect(existsSync(join(data, `log-${LINES}.jsonl`))).toBe(true);
  });

  it('rows in chunks resume where the last chunk stopped (the file is not read again from its start)', async () => {
    // After the first chunks, the server overwrites the file's first 200 KB with one line longer
    // than readMaxBytes: a scan that started over would reach it and fail.
    const result = await run(`
      const log = await tools.f.export_log({ lines: 30000 });
      let rows = 0, ms = 0;
      for await (const row of log) {
        if (++rows === 12000) await tools.f.scribble({ name: 'log-30000.jsonl', bytes: 200000 });
        ms += row.ms;
      }
      console.log(rows, ms);
    `);
    expect(result.error).toBeUndefined();
    // Σ (i % 50) over 30,000 lines: 600 rounds of 1,225.
    expect(result.stdout).toBe('30000 735000\n');
  });

  it('a link outside the roots, or through a symbolic link out of them, stays the plain link', async () => {
    const result = await run(`
      for (const r of [await tools.f.link_to({ path: ${JSON.stringify(secret)} }), await tools.f.file({ name: 'escape.jsonl' }), await tools.f.file({ name: 'missing.jsonl' })])
        console.log(r.isHandle === undefined, r.type, typeof r.uri);
    `);
    expect(result.error).toBeUndefined();
    expect(result.stdout).toBe('true resource_link string\n'.repeat(3));
    expect(result.stdout).not.toContain('do not read');
  });

  it('a folder, or a file with a line past readMaxBytes, is refused with a message that says why', async () => {
    const result = await run(`
      for (const name of ['folder', 'long.jsonl']) {
        try { const h = await tools.f.file({ name }); console.log('held', h.length); }
        catch (error) { console.log(name, error.message); }
      }
    `);
    expect(result.error).toBeUndefined();
    const [folder, long] = result.stdout.trim().split('\n');
    expect(folder).toContain('not a regular file');
    expect(long).toContain(`Line 2`);
    expect(long).toContain(`longer than ${READ_MAX_BYTES} bytes (readMaxBytes)`);
  });
});
