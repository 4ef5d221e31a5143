// Builds dist/ from src/ with the TypeScript compiler (JavaScript, declarations, source maps).
// Runs on `npm install` / `npm ci` through the `prepare` script, so a fresh checkout has a
// working `codecall` bin.
import { execFileSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const require = createRequire(import.meta.url);
const tsc = require.resolve('typescript/bin/tsc');
// A release build starts clean; the test build (lenient) overwrites in place so that a test run
// in progress never sees dist/ disappear under it.
if (process.env.CODECALL_BUILD_LENIENT !== '1') rmSync(join(root, 'dist'), { recursive: true, force: true });
try {
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], {
    cwd: root,
    stdio: 'inherit',
  });
} catch (error) {
  // Tests build leniently: tsc still emits JavaScript on type errors, and `npm run typecheck`
  // is the gate for those. Everywhere else a type error fails the build.
  if (process.env.CODECALL_BUILD_LENIENT !== '1') throw error;
  console.warn('build: type errors above; dist/ was emitted anyway (CODECALL_BUILD_LENIENT=1)');
}

// The sandbox prelude: code that runs inside each isolate (sandbox/), bundled into one
// strict-mode script that src/isolate/ loads from dist/sandbox/prelude.js.
buildSync({
  entryPoints: [join(root, 'sandbox', 'prelude.ts')],
  outfile: join(root, 'dist', 'sandbox', 'prelude.js'),
  bundle: true,
  format: 'iife',
  platform: 'neutral',
  target: 'esnext',
  logLevel: 'warning',
});
