/**
 * @module
 * `codecall graph` (not built yet: see the open issues).
 */
import type { CliCommand } from '../command.js';

/** `codecall graph`. */
export const graphCommand: CliCommand = {
  name: 'graph',
  summary: '(not available yet)',
  usage: 'codecall graph: not available in this build yet.',
  run(_argv, io) {
    io.stderr.write('codecall graph is not available in this build yet.\n');
    return Promise.resolve(2);
  },
};
