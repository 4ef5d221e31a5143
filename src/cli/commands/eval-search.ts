/**
 * @module
 * `codecall eval-search` (not built yet: see the open issues).
 */
import type { CliCommand } from '../command.js';

/** `codecall eval-search`. */
export const evalSearchCommand: CliCommand = {
  name: 'eval-search',
  summary: '(not available yet)',
  usage: 'codecall eval-search: not available in this build yet.',
  run(_argv, io) {
    io.stderr.write('codecall eval-search is not available in this build yet.\n');
    return Promise.resolve(2);
  },
};
