/**
 * @module
 * `codecall demo [dir] [--force]`: the Quick start outside a checkout. Copies the package's own
 * example (the expense MCP server, its configuration, a script and the tools' declarations, all
 * shipped in the package under `examples/`) into a folder, makes the server's
 * `import … from 'codecall/testing'` resolve there, records the configuration as trusted and
 * prints the commands to run next.
 */
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, lstat, mkdir, rm, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../command.js';
import { neutralizeControls } from '../terminal-text.js';
import { rememberTrustedConfig } from '../trust.js';
import { demoHelp } from './demo.help.js';

/** The folder written when none is given, under the working directory. */
const DEFAULT_DEMO_DIR = 'codecall-demo';
/** What is written: a path under the package's `examples/` and, the same, under the folder. */
const DEMO_FILES = [
  { path: 'codecall.json', what: 'a configuration that starts the expense server' },
  { path: 'expense-server/server.mjs', what: 'the example expense MCP server' },
  { path: 'scripts/over-budget.ts', what: 'a script for `codecall exec`' },
  { path: 'scripts/tools.d.ts', what: "the tools' TypeScript declarations, for an editor" },
] as const;
/** The configuration among {@link DEMO_FILES}. */
const DEMO_CONFIG = 'codecall.json';
/** The module the written server imports. */
const SERVER_IMPORT = 'codecall/testing';
/** The question the printed `codecall run` asks (the one the `demo` model answers). */
const DEMO_QUESTION = 'Which team members exceeded their Q3 travel budget?';
/** Folders walked up from this module to find the package root (src/cli/commands, dist/bundle). */
const MAX_PACKAGE_ASCENT = 5;

/** The root of the codecall package this module belongs to (where its package.json says "codecall"). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level <= MAX_PACKAGE_ASCENT; level++) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === 'codecall'
    )
      return dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new Error(`the codecall package root was not found above ${fileURLToPath(import.meta.url)}`);
}

/** True when a module in `dir` can import `specifier` (through node_modules above it, or a self-reference). */
function resolvesFrom(dir: string, specifier: string): boolean {
  try {
    createRequire(join(dir, 'noop.js')).resolve(specifier);
    return true;
  } catch {
    return false;
  }
}

/** True when something (a file, a folder, a link, even a broken one) is at `path`. */
async function occupied(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** `path` as a shell word: as is when it needs no quoting, else in single quotes. */
function shellWord(path: string): string {
  return /^[\w./@%+=:,-]+$/.test(path) ? path : `'${path.replaceAll("'", `'\\''`)}'`;
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandArgs({
    args: argv,
    options: { force: { type: 'boolean' } },
    allowPositionals: true,
  });
  if (positionals.length > 1)
    throw new UsageError(`one folder at most: got ${positionals.map((p) => `"${p}"`).join(', ')}.`);
  const force = values.force === true;
  const target = resolve(io.cwd, positionals[0] ?? DEFAULT_DEMO_DIR);
  const shown = neutralizeControls(target);
  const root = packageRoot();
  const missing = DEMO_FILES.filter((file) => !existsSync(join(root, 'examples', file.path)));
  if (missing.length > 0) {
    io.stderr.write(
      `codecall demo: this installation (${neutralizeControls(root)}) lacks ${missing.map((file) => `examples/${file.path}`).join(', ')}; nothing was written.\n` +
        'Fix: reinstall codecall (its package ships them).\n',
    );
    return 1;
  }
  const link = resolvesFrom(target, SERVER_IMPORT) ? undefined : join(target, 'node_modules', 'codecall');

  const existing: string[] = [];
  for (const file of DEMO_FILES) if (await occupied(join(target, file.path))) existing.push(file.path);
  if (link !== undefined && (await occupied(link))) existing.push('node_modules/codecall');
  if (existing.length > 0 && !force) {
    io.stderr.write(
      `codecall demo: ${shown} already has ${existing.join(', ')}; nothing was written.\n` +
        'Fix: give another folder (`codecall demo <dir>`), or pass --force to overwrite them.\n',
    );
    return 1;
  }

  try {
    for (const file of DEMO_FILES) {
      const destination = join(target, file.path);
      await mkdir(dirname(destination), { recursive: true });
      await copyFile(join(root, 'examples', file.path), destination);
    }
    if (link !== undefined) {
      await mkdir(dirname(link), { recursive: true });
      await rm(link, { recursive: true, force: true });
      // A junction on Windows: a folder link that needs no administrator rights.
      await symlink(root, link, 'junction');
    }
  } catch (error) {
    io.stderr.write(`codecall demo: could not write the demo into ${shown}: ${(error as Error).message}\n`);
    return 1;
  }
  let trustNote =
    'codecall.json is recorded as trusted: commands run in the folder start its server without asking.';
  try {
    await rememberTrustedConfig(io.env, join(target, DEMO_CONFIG));
  } catch (error) {
    trustNote =
      `codecall.json could not be recorded as trusted (${(error as Error).message}): ` +
      'commands in the folder will ask first, or pass --trust.';
  }

  const width = Math.max(...DEMO_FILES.map((file) => file.path.length), 'node_modules/codecall'.length);
  const lines = [
    `codecall demo: wrote ${shown}`,
    ...DEMO_FILES.map((file) => `  ${file.path.padEnd(width)}  ${file.what}`),
    ...(link === undefined
      ? []
      : [
          `  ${'node_modules/codecall'.padEnd(width)}  a link to ${neutralizeControls(root)}, so the server's import of ${SERVER_IMPORT} resolves`,
        ]),
    trustNote,
    '',
    'Next:',
  ];
  const fromCwd = relative(io.cwd, target);
  if (fromCwd !== '') {
    const cdTo = fromCwd.startsWith('..') || isAbsolute(fromCwd) ? target : fromCwd;
    lines.push(`  cd ${neutralizeControls(shellWord(cdTo))}`);
  }
  lines.push(
    '  codecall tools                         # the server and its tools',
    '  codecall exec scripts/over-budget.ts   # a script calling them in the sandbox',
    `  codecall run "${DEMO_QUESTION}" --model demo`,
    '`run` is the agent loop, here with the offline scripted model `demo`. With a real one:',
    '--model anthropic:claude-sonnet-4-6 (ANTHROPIC_API_KEY, `npm install @anthropic-ai/sdk`) or',
    '--model openai:gpt-4.1 (OPENAI_API_KEY, `npm install openai`), installed next to codecall.',
    'codecall installed in a project rather than globally: `npx codecall …`.',
    '',
  );
  io.stdout.write(lines.join('\n'));
  return 0;
}

/** `codecall demo`. */
export const demoCommand: CliCommand = { ...demoHelp, run };
