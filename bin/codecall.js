#!/usr/bin/env node
// Launcher. isolated-vm needs `--no-node-snapshot` in a process that creates isolates; with the
// default `process` sandbox mode the CLI process creates none (its worker processes are spawned
// with the flag), so the CLI runs right here, in one Node start-up. Only a call that may create
// isolates in the CLI process itself (a configuration with `sandbox.mode: "in-process"`, the jobs
// `worker`; see src/cli/isolate-host.ts) re-executes Node with the flag, forwarding arguments,
// standard streams, exit code and signals.
// The Node check runs before dist/ (which needs a newer Node) is imported.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import module from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exitUnlessSupportedNode } from './check-node.js';

exitUnlessSupportedNode('codecall');
// V8 keeps the compiled code of the CLI's modules on disk (Node's module compile cache, checked
// against each module's source), so later runs skip compiling them. The cache is the user's own
// folder, not Node's default in the shared temp folder, where another local user could plant
// code for us to load. NODE_COMPILE_CACHE=<dir> moves it, NODE_DISABLE_COMPILE_CACHE=1 turns it off.
module.enableCompileCache?.(compileCacheDir());

/** The user's cache folder for codecall's compiled modules. */
function compileCacheDir() {
  const base =
    process.platform === 'win32'
      ? process.env.LOCALAPPDATA || join(homedir(), 'AppData', 'Local')
      : process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'codecall', 'node-compile-cache');
}

// The bundled CLI (dist/bundle/, written by `npm run build`), else the modules tsc wrote.
const bundle = new URL('../dist/bundle/', import.meta.url);
const dist = existsSync(new URL('main.js', bundle)) ? bundle : new URL('../dist/cli/', import.meta.url);
const main = fileURLToPath(new URL('main.js', dist));
const cli = await import(main);
const argv = process.argv.slice(2);
const host = cli.answersWithoutIsolate(argv)
  ? undefined
  : await import(new URL('isolate-host.js', dist).href);
if (host === undefined || host.hostHasNoSnapshotFlag() || !host.needsNoSnapshotHost(argv)) {
  await cli.runCli();
} else {
  // The child watches fd 3 (IPC) to exit when this launcher is gone, even by SIGKILL.
  const watch = new URL('./exit-with-launcher.js', import.meta.url).href;
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', '--import', watch, ...process.execArgv, main, ...argv],
    {
      stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    },
  );
  const forwarded = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const signal of forwarded) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('exit', (code, signal) => {
    if (signal) {
      // Die of the same signal, so the caller sees it (our own forwarding handlers go first).
      for (const name of forwarded) process.removeAllListeners(name);
      process.kill(process.pid, signal);
    } else process.exit(code ?? 1);
  });
}
