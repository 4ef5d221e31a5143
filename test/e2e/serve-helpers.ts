/**
 * Helpers of the `codecall serve` end-to-end tests: a temporary configuration over the example
 * expense server, the process tree of a server (from /proc), and a spawned `codecall serve`.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');
export const BIN = join(ROOT, 'bin', 'codecall.js');

/** A temp dir with `work/codecall.json` over the example expense server (history in the dir). */
export function tempServeConfig(extra: Record<string, unknown> = {}): {
  dir: string;
  workDir: string;
  configPath: string;
  historyPath: string;
} {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-serve-'));
  const workDir = join(dir, 'work');
  const historyPath = join(workDir, '.codecall', 'history.sqlite');
  const configPath = join(workDir, 'codecall.json');
  // A package.json one level up: inspector-cli 1.0.3 checks "../package.json" against its cwd.
  writeFileSync(join(dir, 'package.json'), '{}\n');
  mkdirSync(workDir);
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        expenses: {
          command: process.execPath,
          args: [join(ROOT, 'examples', 'expense-server', 'server.mjs')],
          tools: { flag_expense: { allowedCallers: ['direct'] } },
        },
      },
      sandbox: { cpuTimeMs: 2_000, memoryMb: 64 },
      history: { path: historyPath },
      ...extra,
      // Tests that search right after connecting wait for the expense server (serve answers at once otherwise).
      serve: { waitForServersMs: 60_000, ...(extra.serve as object | undefined) },
    }),
  );
  return { dir, workDir, configPath, historyPath };
}

/** Every live descendant pid of `pid` (Linux /proc). */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The command may contain spaces and parentheses: fields resume after the last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const state = fields[0];
      const ppid = Number(fields[1]);
      if (state === 'Z') continue;
      const list = parents.get(ppid) ?? [];
      list.push(Number(entry));
      parents.set(ppid, list);
    } catch {
      // The process exited while we read.
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of parents.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/** True while `pid` exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** A spawned `codecall serve` with its stderr collected. */
export interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  stderr(): string;
  /** Resolves with the first stderr match of `pattern`. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns `node bin/codecall.js serve …args`. */
export function spawnServe(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): ServeProcess {
  const child = spawn(process.execPath, [BIN, 'serve', ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    stdio: 'pipe',
  });
  let stderr = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void }[] = [];
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    for (const waiter of [...waiters]) {
      const match = stderr.match(waiter.pattern);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolvePromise) =>
    child.on('exit', (code, signal) => resolvePromise({ code, signal })),
  );
  return {
    child,
    stderr: () => stderr,
    waitFor: (pattern) =>
      new Promise((resolvePromise, reject) => {
        const match = stderr.match(pattern);
        if (match) return resolvePromise(match);
        waiters.push({ pattern, resolve: resolvePromise });
        void exited.then(() =>
          reject(new Error(`codecall serve exited before ${pattern}; stderr:\n${stderr}`)),
        );
      }),
    exited,
  };
}
