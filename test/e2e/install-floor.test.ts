/**
 * Installing codecall on a Node.js it cannot run on is refused by the install itself, with the
 * message the CLI gives (issue 30): package.json's "preinstall" runs bin/preinstall.js, which npm
 * runs for a dependency (`npm install codecall`, a tarball, `-g`) once the packages are unpacked
 * and before any of them builds; a checkout's own `npm ci` is refused by "devEngines" before it
 * unpacks anything. The old Node is faked with CODECALL_PREINSTALL_NODE_VERSION, which only
 * bin/preinstall.js reads, so the test runs on any machine.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { NODE_ENGINES, unsupportedNodeMessage } from '../../bin/check-node.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { REPO_ROOT } from './temp-root.js';

const PREINSTALL = join(REPO_ROOT, 'bin', 'preinstall.js');
const OLD_VERSION = 'v20.20.2';
/** npm's cache and logs for this suite (removed with the suite's temp folders). */
const NPM_CACHE = tempDir('codecall-install-floor-npm-');
/** An npm command: long enough for a cold start on a loaded machine. */
const NPM_TIMEOUT_MS = 120_000;
/** A test runs up to three npm commands. */
const TEST_TIMEOUT_MS = 3 * NPM_TIMEOUT_MS;

interface Manifest {
  version: string;
  scripts: Record<string, string>;
  devEngines?: { runtime?: unknown };
}
const manifest = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;

/** Runs a command to its end: exit code and output, never a rejection. */
async function spawnFor(
  command: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(command, args, {
    ...options,
    // npm turns on Node's compile cache, by default in the temp folder the suite checks is left empty.
    // npm's cache and logs go to the suite's temp folder, never to ~/.npm.
    env: {
      ...(options.env ?? process.env),
      NODE_DISABLE_COMPILE_CACHE: '1',
      npm_config_cache: NPM_CACHE,
      npm_config_logs_dir: join(NPM_CACHE, '_logs'),
    },
    timeout: NPM_TIMEOUT_MS,
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

/** `node bin/preinstall.js` as npm starts it, with the Node version faked (or not). */
function preinstall(version: string | undefined) {
  const env = { ...process.env };
  delete env.CODECALL_PREINSTALL_NODE_VERSION;
  if (version !== undefined) env.CODECALL_PREINSTALL_NODE_VERSION = version;
  return spawnFor(process.execPath, [PREINSTALL], { cwd: REPO_ROOT, env });
}

describe('install on an unsupported Node', () => {
  it('bin/preinstall.js refuses an old Node with the CLI message and exit 2; passes the floor silently', async () => {
    const old = await preinstall(OLD_VERSION);
    expect(old.code).toBe(2);
    expect(old.stderr).toBe(unsupportedNodeMessage(OLD_VERSION, 'codecall'));
    expect(old.stderr).toMatch(
      /^codecall needs Node\.js \^22\.18\.0 \|\| >=23\.6\.0 \(22\.18 or newer\); this is v20\.20\.2\.\n/,
    );
    expect(old.stdout).toBe('');

    for (const version of ['22.17.1', '23.5.0']) expect((await preinstall(version)).code).toBe(2);
    for (const version of ['v22.18.0', 'v23.6.0', undefined]) {
      expect(await preinstall(version)).toEqual({ code: 0, stdout: '', stderr: '' });
    }
  });

  it(
    'package.json runs it as "preinstall", ships it, and refuses a checkout install through devEngines',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      expect(manifest.scripts.preinstall).toBe('node bin/preinstall.js');
      expect(manifest.devEngines?.runtime).toEqual({ name: 'node', version: NODE_ENGINES, onFail: 'error' });
      const { code, stdout, stderr } = await spawnFor(
        'npm',
        ['pack', '--dry-run', '--json', '--ignore-scripts', '--no-update-notifier'],
        { cwd: REPO_ROOT },
      );
      expect(code, stderr).toBe(0);
      const [packed] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
      const files = packed!.files.map((file) => file.path);
      expect(files).toEqual(expect.arrayContaining(['bin/preinstall.js', 'bin/check-node.js']));
    },
  );

  it(
    'npm install of a package with that preinstall fails with the message and installs nothing',
    { timeout: TEST_TIMEOUT_MS },
    async () => {
      // The real script and manifest entry in a package without dependencies: npm's lifecycle, offline.
      const dir = tempDir('codecall-install-floor-');
      const source = join(dir, 'package');
      mkdirSync(join(source, 'bin'), { recursive: true });
      for (const file of ['preinstall.js', 'check-node.js'])
        copyFileSync(join(REPO_ROOT, 'bin', file), join(source, 'bin', file));
      writeFileSync(
        join(source, 'package.json'),
        JSON.stringify({
          name: 'codecall',
          version: manifest.version,
          type: 'module',
          files: ['bin'],
          scripts: { preinstall: manifest.scripts.preinstall },
        }),
      );
      const npmOptions = ['--offline', '--no-audit', '--no-fund', '--no-update-notifier', '--loglevel=error'];
      const pack = await spawnFor('npm', ['pack', '--json', ...npmOptions, '--pack-destination', dir], {
        cwd: source,
      });
      expect(pack.code, pack.stderr).toBe(0);
      const tarball = join(dir, (JSON.parse(pack.stdout) as Array<{ filename: string }>)[0]!.filename);
      const project = join(dir, 'project');
      mkdirSync(project);
      writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'probe', private: true }));
      // The scripts' `node` is the first on PATH: this Node, whose version the variable stands in for.
      const env = {
        ...process.env,
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
        CODECALL_PREINSTALL_NODE_VERSION: OLD_VERSION,
      };
      const install = await spawnFor('npm', ['install', ...npmOptions, tarball], { cwd: project, env });
      expect(install.code).not.toBe(0);
      const message = unsupportedNodeMessage(OLD_VERSION, 'codecall').trimEnd().split('\n');
      // npm prints the script's stderr, each line after its "npm error " prefix.
      for (const line of message) expect(install.stderr).toContain(`npm error ${line}\n`);
      expect(install.stderr).toMatch(/npm error command .*node bin\/preinstall\.js/);
      expect(existsSync(join(project, 'node_modules', 'codecall'))).toBe(false);

      const accepted = await spawnFor('npm', ['install', ...npmOptions, tarball], {
        cwd: project,
        env: { ...env, CODECALL_PREINSTALL_NODE_VERSION: 'v22.18.0' },
      });
      expect(accepted.code, accepted.stderr).toBe(0);
      expect(existsSync(join(project, 'node_modules', 'codecall', 'bin', 'preinstall.js'))).toBe(true);
    },
  );
});
