/**
 * @module
 * Builds dist/ once before the suite, so tests that spawn the `codecall` bin or worker
 * processes run the code under test, not a stale build. After the suite, fails the run if it
 * left anything behind:
 *
 * - files in the work tree (tests write into temp dirs only: a usage history left in
 *   examples/.codecall would make later runs start from learned history);
 * - temp entries: the run gets a fresh temp folder of its own (`TMPDIR`, which `os.tmpdir()`
 *   reads and vitest's forks and every process they start inherit), which must be empty at the
 *   end; it is then deleted;
 * - processes: any process started during the run that is still alive at the end and belongs
 *   to it (a descendant of a test fork, or one whose environment carries this run's marker, whose
 *   command line names the run's temp folder or whose working directory is in it: an orphan whose
 *   parent has exited is found that way). They are listed, then killed.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
/** Paths the build itself writes: never reported. */
const BUILD_OUTPUT = /^!! (dist|node_modules)\/$/;
/** Source files a developer may add while the suite runs: never reported (no test writes them). */
const NEW_SOURCE = /^\?\? (src|test|bench|docs)\/.*\.(ts|md)$/;
/** Environment variable that marks every process of one test run: its temp folder's path. */
export const TEST_RUN_MARKER = 'CODECALL_TEST_RUN';
/** How long the check waits for processes that are already on their way out (killed, not yet reaped). */
const EXIT_GRACE_MS = 5_000;
const EXIT_POLL_MS = 100;
/** Parents followed up from a process before giving up on finding the runner among them. */
const MAX_PARENT_DEPTH = 64;

/**
 * Files in the work tree that git does not track, one `?? path` (untracked, listed one by one) or
 * `!! path` (ignored, by its top ignored directory) line each; edits of tracked files are left
 * out, and so are new source files (a developer may be editing while the suite runs).
 * `undefined` outside a git checkout.
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
  return new Set(
    status
      .split('\n')
      .filter((line) => /^(\?\?|!!) /.test(line) && !BUILD_OUTPUT.test(line) && !NEW_SOURCE.test(line)),
  );
}

/** One process as `/proc` shows it. */
export interface ProcessEntry {
  pid: number;
  ppid: number;
  /** `R`, `S`, `Z`, … (field 3 of `/proc/<pid>/stat`). */
  state: string;
  cmdline: string;
  /** Its environment, `NAME=value` entries; empty when it cannot be read (another user's). */
  environ: string[];
}

/** Every process `/proc` lists, by pid; empty where there is no `/proc`. */
export function listProcesses(): Map<number, ProcessEntry> {
  const processes = new Map<number, ProcessEntry>();
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return processes;
  }
  for (const name of pids) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      // The command name (field 2) is in parentheses and may hold spaces or parentheses itself.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      let environ: string[] = [];
      try {
        environ = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
      } catch {
        // Not ours to read.
      }
      processes.set(Number(name), { pid: Number(name), ppid: Number(ppid), state: state!, cmdline, environ });
    } catch {
      // It exited while we looked.
    }
  }
  return processes;
}

/** Whether `pid`'s working directory is `dir` or under it. */
function workingIn(pid: number, dir: string): boolean {
  try {
    const cwd = readlinkSync(`/proc/${pid}/cwd`);
    return cwd === dir || cwd.startsWith(`${dir}/`);
  } catch {
    return false;
  }
}

/**
 * The processes of the run whose main process is `runnerPid` and whose marker is `runDir`, that
 * did not exist in `before`: descendants of a test fork (a child of the runner), processes that
 * carry the marker in their environment (orphans too), and processes whose command line names
 * `runDir` or whose working directory is in it. The runner's own children (test forks, vite's
 * esbuild service) and zombies are not counted.
 */
export function leftoverProcesses(
  processes: Map<number, ProcessEntry>,
  before: ReadonlySet<number>,
  runnerPid: number,
  runDir: string,
): ProcessEntry[] {
  const depthUnderRunner = (entry: ProcessEntry): number | undefined => {
    let current: ProcessEntry | undefined = entry;
    for (let depth = 0; current !== undefined && depth <= MAX_PARENT_DEPTH; depth++) {
      if (current.pid === runnerPid) return depth;
      current = processes.get(current.ppid);
    }
    return undefined;
  };
  const marker = `${TEST_RUN_MARKER}=${runDir}`;
  return [...processes.values()].filter((entry) => {
    if (before.has(entry.pid) || entry.pid === runnerPid || entry.state === 'Z') return false;
    const depth = depthUnderRunner(entry);
    if (depth === 1) return false;
    return (
      depth !== undefined ||
      entry.environ.includes(marker) ||
      entry.cmdline.includes(runDir) ||
      workingIn(entry.pid, runDir)
    );
  });
}

/** {@link leftoverProcesses}, once those on their way out have had {@link EXIT_GRACE_MS} to go. */
async function leftoverAfterGrace(
  before: ReadonlySet<number>,
  runnerPid: number,
  runDir: string,
): Promise<ProcessEntry[]> {
  const deadline = Date.now() + EXIT_GRACE_MS;
  for (;;) {
    const left = leftoverProcesses(listProcesses(), before, runnerPid, runDir);
    if (left.length === 0 || Date.now() >= deadline) return left;
    await new Promise((resolveWait) => setTimeout(resolveWait, EXIT_POLL_MS));
  }
}

/** Entries left in the run's temp folder, one level deep (a folder's own contents are not listed). */
function leftoverTempEntries(runDir: string): string[] {
  try {
    return readdirSync(runDir).map((name) => join(runDir, name));
  } catch {
    return [];
  }
}

export default function setup(): () => Promise<void> {
  const before = workTreeChanges();
  execFileSync(process.execPath, ['scripts/build.mjs'], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, CODECALL_BUILD_LENIENT: '1' },
  });
  // After the build (its temp files are its own), before the forks start: they copy process.env.
  const processesBefore = new Set(listProcesses().keys());
  const savedTmpdir = process.env.TMPDIR;
  const runDir = mkdtempSync(join(tmpdir(), 'codecall-test-run-'));
  // Other users must reach the folders tests make in it, as they reach /tmp's: the PostgreSQL
  // tests run initdb as `postgres` in a folder they made there.
  chmodSync(runDir, 0o755);
  process.env.TMPDIR = runDir;
  process.env[TEST_RUN_MARKER] = runDir;

  return async () => {
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
    delete process.env[TEST_RUN_MARKER];
    const problems: string[] = [];

    const processes = await leftoverAfterGrace(processesBefore, process.pid, runDir);
    if (processes.length > 0) {
      problems.push(
        `The test run left ${processes.length} process(es) running (tests must stop every process they start, and wait for it to exit):\n` +
          processes
            .map((entry) => `  pid ${entry.pid} (parent ${entry.ppid}): ${entry.cmdline.slice(0, 300)}`)
            .join('\n') +
          '\nThey have been killed now. Find the test that starts them and stop them in its afterEach/afterAll.',
      );
      for (const entry of processes) {
        try {
          process.kill(entry.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
    }

    const temp = leftoverTempEntries(runDir);
    if (temp.length > 0) {
      problems.push(
        `The test run left ${temp.length} entr${temp.length === 1 ? 'y' : 'ies'} in its temp folder (tests must remove every folder they make):\n  ${temp.join('\n  ')}\n` +
          'They have been deleted with the folder now. Find the test that makes them (its mkdtemp prefix) and remove them in its afterEach/afterAll (test/fixtures/temp-dir.ts does).',
      );
    }
    rmSync(runDir, { recursive: true, force: true });

    if (before === undefined) {
      console.warn(
        'test/global-setup: not a git checkout; skipped the check for files the suite left behind',
      );
    } else {
      const left = [...(workTreeChanges() ?? [])].filter((line) => !before.has(line));
      if (left.length > 0) {
        problems.push(
          `The test run changed the work tree (tests must write into temp dirs only):\n  ${left.join('\n  ')}\n` +
            'Find the test that writes there, point it at a temp dir, and delete these paths.',
        );
      }
    }
    if (problems.length > 0) throw new Error(problems.join('\n\n'));
  };
}
