/**
 * @module
 * `codecall search` (not built yet: see the open issues).
 */
import type { CliCommand } from '../command.js';

/** `codecall search`. */
export const searchCommand: CliCommand = {
  name: 'search',
  summary: '(not available yet)',
  usage: 'codecall search: not available in this build yet.',
  run(_argv, io) {
    io.stderr.write('codecall search is not available in this build yet.\n');
    return Promise.resolve(2);
  },
};
