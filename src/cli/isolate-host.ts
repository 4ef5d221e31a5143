/**
 * @module
 * Whether a CLI call must run in a Node started with `--no-node-snapshot`. isolated-vm requires
 * that flag in every process that creates isolates (on Node ≥ 20 an isolate created next to
 * Node's start-up snapshot can crash the process). In the default `process` sandbox mode the
 * CLI process creates none: isolates live in worker processes, which are spawned with the flag.
 * So the launcher (bin/codecall.js) runs the CLI in its own process, and re-executes Node with
 * the flag only for what may create isolates in the host: the `in-process` sandbox mode, and the
 * jobs `worker` (whose configurations are named per job).
 *
 * The configuration is only peeked at here (found as `loadConfig` finds it, read as JSON with
 * comments, never validated): a `sandbox.mode` that is absent or `"process"` keeps one process;
 * anything else re-executes, and the re-executed CLI validates the file and reports its faults.
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CONFIG_FILE_NAMES } from '../config/load-config.js';
import { parseConfigText } from '../config/parse-config-text.js';

/** The Node flag isolated-vm needs in a process that creates isolates. */
export const NO_NODE_SNAPSHOT_FLAG = '--no-node-snapshot';

/** Commands that never read a configuration nor start a sandbox. */
const WITHOUT_SANDBOX = new Set(['help', '--help', '-h', '--version', '-v']);

/** Commands that always run in a host started with the flag (configurations chosen per job). */
const ALWAYS_FLAGGED = new Set(['worker']);

/** True when this process was started with `--no-node-snapshot` (command line or `NODE_OPTIONS`). */
export function hostHasNoSnapshotFlag(
  execArgv: readonly string[] = process.execArgv,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  if (execArgv.includes(NO_NODE_SNAPSHOT_FLAG)) return true;
  return (env.NODE_OPTIONS ?? '').split(/\s+/).includes(NO_NODE_SNAPSHOT_FLAG);
}

/** The value of the first `--config <path>` / `--config=<path>` in `argv`. */
function configArgument(argv: readonly string[]): string | undefined {
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--config') return argv[index + 1];
    if (arg.startsWith('--config=')) return arg.slice('--config='.length);
  }
  return undefined;
}

/** The `sandbox.mode` written in the configuration `argv` would load, or `undefined`. */
function peekSandboxMode(path: string | undefined, cwd: string): unknown {
  const candidates = path !== undefined ? [resolve(cwd, path)] : CONFIG_FILE_NAMES.map((n) => join(cwd, n));
  for (const file of candidates) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    const parsed = parseConfigText(text);
    // Unreadable as JSON: the command reports it and starts no sandbox.
    if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null) return undefined;
    const sandbox = (parsed.value as { sandbox?: unknown }).sandbox;
    if (typeof sandbox !== 'object' || sandbox === null) return undefined;
    return Object.hasOwn(sandbox, 'mode') ? (sandbox as { mode: unknown }).mode : undefined;
  }
  return undefined;
}

/**
 * True when `codecall <argv>` may create isolates in its own process, so it must run in a Node
 * started with `--no-node-snapshot`: the jobs `worker`, and any command whose configuration asks
 * for a sandbox `mode` other than `"process"` (`"in-process"`, or a value only the full loader
 * can judge, such as `${VAR}`).
 */
export function needsNoSnapshotHost(argv: readonly string[], cwd: string = process.cwd()): boolean {
  const [name, ...rest] = argv;
  if (name === undefined || WITHOUT_SANDBOX.has(name)) return false;
  if (ALWAYS_FLAGGED.has(name)) return true;
  if (rest.includes('--help') || rest.includes('-h')) return false;
  const mode = peekSandboxMode(configArgument(rest), cwd);
  return mode !== undefined && mode !== 'process';
}
