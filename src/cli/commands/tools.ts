/**
 * @module
 * `codecall tools` (not built yet: see the open issues).
 */
import type { CliCommand } from '../command.js';

/** `codecall tools`. */
export const toolsCommand: CliCommand = {
  name: 'tools',
  summary: '(not available yet)',
  usage: 'codecall tools: not available in this build yet.',
  run(_argv, io) {
    io.stderr.write('codecall tools is not available in this build yet.\n');
    return Promise.resolve(2);
  },
};
