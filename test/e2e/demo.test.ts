/**
 * `codecall demo` from an installed package (issue 30): the repository is packed (`npm pack`) and
 * the tarball unpacked as a global install lays it out (the package, its dependencies in its own
 * node_modules), then that copy's bin writes the demo into a folder outside any project. From that
 * folder, with no --config and no --trust, `codecall tools`, `exec` and `run --model demo` answer
 * from the written server, which imports `codecall/testing` from the installed package.
 */
import { execFile } from 'node:child_process';
import {
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { createExpenseData, overBudgetMembers } from '../../src/testing/servers/index.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { REPO_ROOT } from './temp-root.js';

/** What `codecall demo` writes (besides the link). */
const DEMO_FILES = [
  'codecall.json',
  'expense-server/server.mjs',
  'scripts/over-budget.ts',
  'scripts/tools.d.ts',
];
const QUESTION = 'Which team members exceeded their Q3 travel budget?';
/** npm pack of the built checkout, or one codecall command, on a loaded machine. */
const COMMAND_TIMEOUT_MS = 120_000;
/** A test runs a few commands, each started cold (the whole suite runs alongside). */
const TEST_TIMEOUT_MS = 4 * COMMAND_TIMEOUT_MS;

const temp = tempDir('codecall-demo-');
/** The unpacked package: `<prefix>/lib/node_modules/codecall`, as `npm install -g` lays it out. */
const PACKAGE = join(temp, 'prefix', 'lib', 'node_modules', 'codecall');
const BIN = join(PACKAGE, 'bin', 'codecall.js');
// The configuration starts "node": this Node. The user's state directory is never touched.
const ENV: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
  CODECALL_STATE_DIR: join(temp, 'state'),
  NODE_DISABLE_COMPILE_CACHE: '1',
  // npm's cache and logs go to the suite's temp folder, never to ~/.npm.
  npm_config_cache: join(temp, 'npm-cache'),
  npm_config_logs_dir: join(temp, 'npm-cache', '_logs'),
};
delete ENV.CODECALL_TRUST;

/** Runs a command to its end: exit code and output, never a rejection. */
async function runFor(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(command, args, {
    cwd,
    env: ENV,
    timeout: COMMAND_TIMEOUT_MS,
    killSignal: 'SIGKILL',
    maxBuffer: 16 * 1024 * 1024,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number | string; stdout: string; stderr: string }) => ({
      code: typeof error.code === 'number' ? error.code : -1,
      stdout: error.stdout,
      stderr: error.stderr,
    }),
  );
}

/** `codecall …` of the installed copy, run in `cwd`. */
const codecall = (args: string[], cwd: string) => runFor(process.execPath, [BIN, ...args], cwd);

beforeAll(async () => {
  // dist/ is the one the suite's global setup just built.
  const pack = await runFor(
    'npm',
    ['pack', '--json', '--ignore-scripts', '--no-update-notifier', '--pack-destination', temp],
    REPO_ROOT,
  );
  expect(pack.code, pack.stderr).toBe(0);
  const [packed] = JSON.parse(pack.stdout) as Array<{ filename: string }>;
  mkdirSync(dirname(PACKAGE), { recursive: true });
  const untar = await runFor('tar', ['-xzf', join(temp, packed!.filename), '-C', dirname(PACKAGE)], temp);
  expect(untar.code, untar.stderr).toBe(0);
  renameSync(join(dirname(PACKAGE), 'package'), PACKAGE);
  // Its dependencies, where a global install puts them (the checkout's, already installed).
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(PACKAGE, 'node_modules'), 'dir');
}, COMMAND_TIMEOUT_MS);

describe('codecall demo, from the packed package', () => {
  it(
    'writes the example outside any project, and tools, exec and run work from that folder',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const work = join(temp, 'work');
      mkdirSync(work);
      const demo = join(work, 'my demo');
      const written = await codecall(['demo', 'my demo'], work);
      expect(written.stderr).toBe('');
      expect(written.code).toBe(0);
      expect(written.stdout).toContain(`codecall demo: wrote ${demo}\n`);
      for (const file of DEMO_FILES) {
        expect(written.stdout).toMatch(new RegExp(`^  ${file.replaceAll('.', '\\.')} +\\S`, 'm'));
        // The package's own example, byte for byte.
        expect(readFileSync(join(demo, file), 'utf8')).toBe(
          readFileSync(join(PACKAGE, 'examples', file), 'utf8'),
        );
      }
      expect(readFileSync(join(demo, 'expense-server', 'server.mjs'), 'utf8')).toContain(
        "import { runTestServer } from 'codecall/testing';",
      );
      // Nothing above the folder resolves `codecall`: a link to the installed package does.
      expect(written.stdout).toContain(`  node_modules/codecall      a link to ${PACKAGE}`);
      expect(realpathSync(join(demo, 'node_modules', 'codecall'))).toBe(realpathSync(PACKAGE));
      expect(written.stdout).toContain(
        [
          'Next:',
          "  cd 'my demo'",
          '  codecall tools                         # the server and its tools',
          '  codecall exec scripts/over-budget.ts   # a script calling them in the sandbox',
          `  codecall run "${QUESTION}" --model demo`,
        ].join('\n'),
      );

      // The printed commands, as printed: in the folder, no --config, no --trust.
      const tools = await codecall(['tools'], demo);
      expect(tools.code, tools.stderr).toBe(0);
      expect(tools.stdout).toContain('expenses (stdio, connected, 5 tools)\n');
      expect(tools.stdout).toMatch(
        /^ {2}expenses\.get_expenses +tools\.expenses\.get_expenses +direct\+code /m,
      );

      const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');
      const exec = await codecall(['exec', 'scripts/over-budget.ts'], demo);
      expect(exec.code, exec.stderr).toBe(0);
      const lines = exec.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^Scanned 2400 line items: \$\d+ spent this year; top categories:/);
      expect(lines[1]).toBe(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
      expect(lines.slice(2).map((line) => line.slice(2, line.indexOf(' (')))).toEqual(
        [...expected].sort((a, b) => b.spent - b.budget - (a.spent - a.budget)).map((e) => e.member.name),
      );

      const run = await codecall(['run', QUESTION, '--model', 'demo'], demo);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
      expect(run.stderr).toContain('step 2 · execute_code · 8 tool calls');
    },
  );

  it(
    'inside a project that has codecall installed, writes no link: the import resolves from the project',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const project = join(temp, 'project');
      mkdirSync(join(project, 'node_modules'), { recursive: true });
      symlinkSync(PACKAGE, join(project, 'node_modules', 'codecall'), 'dir');
      const written = await codecall(['demo'], project);
      expect(written.code, written.stderr).toBe(0);
      const demo = join(project, 'codecall-demo');
      expect(readdirSync(demo).sort()).toEqual(['codecall.json', 'expense-server', 'scripts']);
      expect(written.stdout).not.toContain('node_modules/codecall');
      expect(written.stdout).toContain('\n  cd codecall-demo\n');
      const tools = await codecall(['tools'], demo);
      expect(tools.code, tools.stderr).toBe(0);
      expect(tools.stdout).toContain('expenses (stdio, connected, 5 tools)\n');
    },
  );

  it(
    'refuses to overwrite existing files and writes nothing; --force overwrites them',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      const demo = join(temp, 'again');
      expect((await codecall(['demo', demo], temp)).code).toBe(0);
      writeFileSync(join(demo, 'codecall.json'), '{"mcpServers": {}}\n');
      writeFileSync(join(demo, 'scripts', 'over-budget.ts'), 'console.log("mine");\n');

      const refused = await codecall(['demo', demo], temp);
      expect(refused.code).toBe(1);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toBe(
        `codecall demo: ${demo} already has codecall.json, expense-server/server.mjs, scripts/over-budget.ts, scripts/tools.d.ts; nothing was written.\n` +
          'Fix: give another folder (`codecall demo <dir>`), or pass --force to overwrite them.\n',
      );
      expect(readFileSync(join(demo, 'codecall.json'), 'utf8')).toBe('{"mcpServers": {}}\n');
      expect(readFileSync(join(demo, 'scripts', 'over-budget.ts'), 'utf8')).toBe('console.log("mine");\n');

      const forced = await codecall(['demo', demo, '--force'], temp);
      expect(forced.code, forced.stderr).toBe(0);
      for (const file of DEMO_FILES)
        expect(readFileSync(join(demo, file), 'utf8')).toBe(
          readFileSync(join(PACKAGE, 'examples', file), 'utf8'),
        );

      const usage = await codecall(['demo', 'one', 'two'], temp);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain('codecall demo: one folder at most: got "one", "two".');
    },
  );
});
