/**
 * @module
 * Where the CLI says what it noticed about a configuration file (keys other clients write that
 * codecall ignores, …): one line each on stderr, never on stdout, which may carry JSON.
 */
import type { CliIo } from './command.js';
import { neutralizeControls } from './terminal-text.js';

/** The `onNotice` of `loadConfig` for a CLI command: writes `codecall: <notice>` on stderr. */
export function configNoticeWriter(io: Pick<CliIo, 'stderr'>): (notice: string) => void {
  return (notice) => {
    io.stderr.write(`codecall: ${neutralizeControls(notice)}\n`);
  };
}
