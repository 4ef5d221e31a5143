/**
 * @module
 * `codecall run` (not built yet: see the open issues).
 */
import type { CliCommand } from '../command.js';

/** `codecall run`. */
export const runCommand: CliCommand = {
  name: 'run',
  summary: '(not available yet)',
  usage: 'codecall run: not available in this build yet.',
  run(_argv, io) {
    io.stderr.write('codecall run is not available in this build yet.\n');
    return Promise.resolve(2);
  },
};
