/**
 * @module
 * `codecall exec` (not built yet: see the open issues).
 */
import type { CliCommand } from '../command.js';

/** `codecall exec`. */
export const execCommand: CliCommand = {
  name: 'exec',
  summary: '(not available yet)',
  usage: 'codecall exec: not available in this build yet.',
  run(_argv, io) {
    io.stderr.write('codecall exec is not available in this build yet.\n');
    return Promise.resolve(2);
  },
};
