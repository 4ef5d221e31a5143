/**
 * @module
 * Builds dist/ once before the suite, so tests that spawn the `codecall` bin or worker
 * processes run the code under test, not a stale build. After the suite, fails the run if it
 * left files in the work tree (tests write into temp dirs only: a usage history left in
 * examples/.codecall would make later runs start from learned history).
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
/** Paths the build itself writes: never reported. */
const BUILD_OUTPUT = /^!! (dist|node_modules)\/$/;

/**
 * Files in the work tree that git does not track, one `?? path` (untracked, listed one by one) or
 * `!! path` (ignored, by its top ignored directory) line each; edits of tracked files are left
 * out (a developer may be editing while the suite runs). `undefined` outside a git checkout.
 */
export function workTreeChanges(root: string = ROOT): Set<string> | undefined {
  let status: string;
  try {
    status = execFileSync(
      'git',
      ['status', '--porcelain=v1', '--untracked-files=all', '--ignored=matching', '--no-renames'],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    );
  } catch {
    return undefined;
  }
  return new Set(status.split('\n').filter((line) => /^(\?\?|!!) /.test(line) && !BUILD_OUTPUT.test(line)));
}

export default function setup(): () => void {
  const before = workTreeChanges();
  execFileSync(process.execPath, ['scripts/build.mjs'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, CODECALL_BUILD_LENIENT: '1' },
  });
  return () => {
    if (before === undefined) {
      console.warn(
        'test/global-setup: not a git checkout; skipped the check for files the suite left behind',
      );
      return;
    }
    const left = [...(workTreeChanges() ?? [])].filter((line) => !before.has(line));
    if (left.length > 0) {
      throw new Error(
        `The test run changed the work tree (tests must write into temp dirs only):\n  ${left.join('\n  ')}\n` +
          'Find the test that writes there, point it at a temp dir, and delete these paths.',
      );
    }
  };
}
