/**
 * @module
 * `codecall serve` (not built yet: see the open issues).
 */
import type { CliCommand } from '../command.js';

/** `codecall serve`. */
export const serveCommand: CliCommand = {
  name: 'serve',
  summary: '(not available yet)',
  usage: 'codecall serve: not available in this build yet.',
  run(_argv, io) {
    io.stderr.write('codecall serve is not available in this build yet.\n');
    return Promise.resolve(2);
  },
};
