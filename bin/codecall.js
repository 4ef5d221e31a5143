#!/usr/bin/env node
// Launcher: isolated-vm needs `--no-node-snapshot`, so the CLI re-executes itself with that flag
// when it is missing, forwarding arguments, standard streams, exit code and signals. Help and
// version requests need no isolate: they are answered here, without a second Node start-up.
// The Node check runs before dist/ (which needs a newer Node) is imported.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { exitUnlessSupportedNode } from './check-node.js';

exitUnlessSupportedNode('codecall');

const main = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const cli = await import(main);
if (process.execArgv.includes('--no-node-snapshot') || cli.answersWithoutIsolate(process.argv.slice(2))) {
  await cli.runCli();
} else {
  // The child watches fd 3 (IPC) to exit when this launcher is gone, even by SIGKILL.
  const watch = new URL('./exit-with-launcher.js', import.meta.url).href;
  const child = spawn(
    process.execPath,
    ['--no-node-snapshot', '--import', watch, ...process.execArgv, main, ...process.argv.slice(2)],
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
