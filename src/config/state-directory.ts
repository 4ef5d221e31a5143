/**
 * @module
 * The user's codecall state folder (trusted configurations, upstream OAuth tokens): outside any
 * project, so a checked-out configuration can neither read nor plant what is kept there.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The user's codecall state directory: `$CODECALL_STATE_DIR`, else `$XDG_STATE_HOME/codecall`,
 * else `~/.local/state/codecall`.
 */
export function stateDirectory(env: NodeJS.ProcessEnv): string {
  if (env.CODECALL_STATE_DIR) return env.CODECALL_STATE_DIR;
  if (env.XDG_STATE_HOME) return join(env.XDG_STATE_HOME, 'codecall');
  return join(env.HOME || homedir(), '.local', 'state', 'codecall');
}
