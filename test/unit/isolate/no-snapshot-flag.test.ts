/**
 * A host started without --no-node-snapshot (what `codecall` is now, in process mode): process
 * mode runs scripts in workers that get the flag themselves, and the host never loads
 * isolated-vm; the in-process mode, which would create isolates beside Node's start-up snapshot
 * (a crash isolated-vm warns of), refuses with SANDBOX_UNAVAILABLE instead. A real Node process
 * started without the flag, on the built dist/.
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

const DIST = resolve(import.meta.dirname, '../../../dist');
const url = (path: string): string => pathToFileURL(join(DIST, path)).href;

const PROBE = `
import { createRequire } from 'node:module';
const { SandboxPool } = await import(${JSON.stringify(url('isolate/index.js'))});
const { compileScript } = await import(${JSON.stringify(url('compile/index.js'))});
const out = {};
try {
  await SandboxPool.open({ mode: 'in-process' });
  out.inProcess = 'opened';
} catch (error) {
  out.inProcess = error.code;
  out.message = error.message;
}
const pool = await SandboxPool.open({ mode: 'process', workers: 1 });
const compiled = compileScript('console.log(await tools.math.add({ a: 2, b: 3 }))');
const result = await pool.run({
  code: compiled.code,
  tools: [{ name: 'math.add', namespace: 'math', member: 'add' }],
  invoke: async ({ args }) => args.a + args.b,
});
await pool.close();
out.processStdout = result.stdout;
const cache = createRequire(import.meta.url).cache;
out.hostLoadedIsolatedVm = Object.keys(cache).some((file) => file.includes('isolated-vm'));
console.log(JSON.stringify(out));
`;

describe('a host without --no-node-snapshot', () => {
  it('runs process mode without loading isolated-vm, and refuses in-process mode by name', () => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    const result = spawnSync(process.execPath, ['--input-type=module', '-e', PROBE], {
      encoding: 'utf8',
      env,
      timeout: 60_000,
    });
    expect(result.stderr).toBe('');
    const out = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(out.processStdout).toBe('5\n');
    expect(out.hostLoadedIsolatedVm).toBe(false);
    expect(out.inProcess).toBe('SANDBOX_UNAVAILABLE');
    expect(out.message).toMatch(/--no-node-snapshot/);
  });
});
