#!/usr/bin/env node
// Launcher: isolated-vm needs `--no-node-snapshot`, so the CLI re-executes itself with that flag
// when it is missing, forwarding arguments, standard streams, exit code and signals.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const [major] = process.versions.node.split('.').map(Number);
if (major < 22) {
  process.stderr.write(
    `codecall needs Node.js 22 or newer; this is ${process.version}.\n` +
      'Install a current Node (https://nodejs.org, or `npm install --prefix ~/.node24 node@24` and put ~/.node24/node_modules/.bin first on PATH).\n',
  );
  process.exit(2);
}

const main = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
if (process.execArgv.includes('--no-node-snapshot')) {
  await import(main);
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
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => child.kill(signal));
  }
  child.on('exit', (code, signal) => {
    if (signal) process.kill(process.pid, signal);
    else process.exit(code ?? 1);
  });
}
