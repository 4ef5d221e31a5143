/**
 * Bundles the test servers into one self-contained script in a temp directory, so tests that
 * spawn them as child processes do not depend on dist/ (which concurrent builds may replace).
 * Usage of the bundle: `node <file> <expenses|misbehaving> [--allow-crash] [--http]`. A test file
 * that bundles it removes it in its `afterAll` with {@link removeTestServerBundle}.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

let bundled: Promise<string> | undefined;
let bundleDir: string | undefined;

export function bundleTestServer(): Promise<string> {
  bundled ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codecall-test-server-'));
    bundleDir = dir;
    const entry = join(dir, 'entry.ts');
    const source = resolve(import.meta.dirname, '../../../src/testing/servers/index.ts');
    writeFileSync(
      entry,
      `import { runTestServer } from ${JSON.stringify(source)};\n` +
        `const [server, ...flags] = process.argv.slice(2);\n` +
        `await runTestServer({ server: server === 'expenses' ? 'expenses' : 'misbehaving', allowCrash: flags.includes('--allow-crash'), http: flags.includes('--http') });\n`,
    );
    const outfile = join(dir, 'server.mjs');
    await build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node22',
      logLevel: 'warning',
      banner: {
        js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
      },
    });
    return outfile;
  })();
  return bundled;
}

/** Removes the bundle made by {@link bundleTestServer}, if any (after its servers have stopped). */
export async function removeTestServerBundle(): Promise<void> {
  await bundled?.catch(() => undefined);
  if (bundleDir !== undefined) rmSync(bundleDir, { recursive: true, force: true });
  bundled = undefined;
  bundleDir = undefined;
}
