/**
 * Bundles the test servers into one self-contained script in a temp directory, so tests that
 * spawn them as child processes do not depend on dist/ (which concurrent builds may replace).
 * Usage of the bundle: `node <file> <expenses|misbehaving> [--allow-crash] [--http]`.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

let bundled: Promise<string> | undefined;

export function bundleTestServer(): Promise<string> {
  bundled ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'codecall-test-server-'));
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
