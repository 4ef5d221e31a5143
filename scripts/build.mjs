// Builds dist/ from src/ with the TypeScript compiler (JavaScript, declarations, source maps).
// Runs on `npm install` / `npm ci` through the `prepare` script, so a fresh checkout has a
// working `codecall` bin.
import { execFileSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, buildSync } from 'esbuild';

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

// The CLI as a bundle (bin/codecall.js loads it when present): dist/cli/main.js and the modules
// and packages it loads, in a few files instead of ~400, so `codecall exec` spends its start-up
// on work rather than on resolving, reading and compiling modules one by one (issue 11: about
// half the module-loading time). Commands stay lazy: each is its own chunk, loaded when it runs.
// Only the packages `codecall exec` and `--help` load are bundled; every other package (provider
// SDKs, BullMQ, Postgres, Express, native addons such as isolated-vm and esbuild itself) stays
// an import resolved from node_modules at run time, exactly as in the unbundled build.
// Worker entries (sandbox, search, token counting) are not bundled: they are found in dist/ as
// before. The bundle sits two levels below the package root like dist/cli/main.js, so paths
// relative to a module (`../../package.json`) mean the same in both.
const CLI_BUNDLED_PACKAGES = new Set([
  '@modelcontextprotocol/sdk',
  'zod',
  'zod-to-json-schema',
  'ajv',
  'ajv-formats',
  'fast-uri',
  'fast-deep-equal',
  'json-schema-traverse',
  'jsonc-parser',
  're2js',
  'stemmer',
  'cross-spawn',
  'which',
  'isexe',
  'path-key',
  'shebang-command',
  'shebang-regex',
]);
const packageName = (specifier) =>
  specifier
    .split('/')
    .slice(0, specifier.startsWith('@') ? 2 : 1)
    .join('/');
await build({
  entryPoints: [join(root, 'dist', 'cli', 'main.js'), join(root, 'dist', 'cli', 'isolate-host.js')],
  outdir: join(root, 'dist', 'bundle'),
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  // Whitespace and syntax only: identifiers (and so the function names of stack traces) stay as
  // written. A third smaller, which keeps the default install within its budget (`npm run size`).
  minifyWhitespace: true,
  minifySyntax: true,
  // jsonc-parser's UMD build requires its parts by computed names; its ESM build bundles.
  mainFields: ['module', 'main'],
  // Bundled CommonJS packages call require() (for node: built-ins and their own files).
  banner: {
    js: "import { createRequire as __codecallCreateRequire } from 'node:module'; const require = __codecallCreateRequire(import.meta.url);",
  },
  plugins: [
    {
      // The commands' help texts in one chunk: main.js imports every *.help.js, and each command
      // imports its own, so esbuild would give each a chunk of its own (a dozen tiny files that
      // `codecall --help` reads one by one). A command's import goes through one module that
      // re-exports them all instead; the texts are data, and main.js loads them all anyway.
      name: 'codecall-cli-help-chunk',
      setup(build) {
        const helpDir = join(root, 'dist', 'cli', 'commands');
        build.onResolve({ filter: /\.help\.js$/ }, (args) =>
          args.importer.endsWith(join('dist', 'cli', 'main.js')) || args.namespace === 'codecall-help'
            ? undefined
            : { path: 'all', namespace: 'codecall-help' },
        );
        build.onLoad({ filter: /^all$/, namespace: 'codecall-help' }, () => ({
          contents: readdirSync(helpDir)
            .filter((file) => file.endsWith('.help.js'))
            .sort()
            .map((file) => `export * from ${JSON.stringify(join(helpDir, file))};`)
            .join('\n'),
          resolveDir: helpDir,
          loader: 'js',
        }));
      },
    },
    {
      name: 'codecall-cli-externals',
      setup(build) {
        build.onResolve({ filter: /^[^./]/ }, (args) =>
          CLI_BUNDLED_PACKAGES.has(packageName(args.path)) ? undefined : { path: args.path, external: true },
        );
      },
    },
  ],
  logLevel: 'warning',
});
