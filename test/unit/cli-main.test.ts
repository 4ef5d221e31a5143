import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';

function io() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  return {
    io: {
      stdout,
      stderr,
      stdin: new PassThrough(),
      cwd: process.cwd(),
      env: {},
      signal: new AbortController().signal,
    },
    out: () => out,
    err: () => err,
  };
}

describe('cli main', () => {
  it('lists commands on --help', async () => {
    const t = io();
    expect(await main(['--help'], t.io)).toBe(0);
    expect(t.out()).toMatch(/Commands:/);
    expect(t.out()).toMatch(/exec/);
  });
  it('suggests the closest command for a typo', async () => {
    const t = io();
    expect(await main(['serch'], t.io)).toBe(2);
    expect(t.err()).toMatch(/Did you mean "search"/);
  });
  it('prints the version', async () => {
    const t = io();
    expect(await main(['--version'], t.io)).toBe(0);
    expect(t.out()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
