// Preloaded (--import) into the CLI process that bin/codecall.js starts: the child dies with its
// launcher. Signals the launcher receives are forwarded, but SIGKILL (what supervisors and MCP
// clients send) cannot be; the launcher's IPC channel closes however it ends, and then this
// process shuts down as on SIGTERM, and exits anyway after a grace period.

import { setTimeout } from 'node:timers';

/** After the launcher is gone, time to shut down cleanly (close MCP servers) before exiting anyway. */
const LAUNCHER_GONE_GRACE_MS = 5_000;

if (process.channel) {
  // Only a watch: the channel must not keep this process alive, nor leak to its children.
  process.channel.unref();
  delete process.env.NODE_CHANNEL_FD;
  process.once('disconnect', () => {
    setTimeout(() => process.exit(129), LAUNCHER_GONE_GRACE_MS).unref();
    process.kill(process.pid, 'SIGTERM');
  });
}
