// Bundles of `npm run bench` are written whole or not at all: to a temporary file beside the
// target, then renamed over it (rename is atomic on one file system). A bench that starts a
// process from its own bundle (the hostile bench's upstream MCP server) must never read a file
// that another `npm run bench` is rewriting: esbuild truncates and rewrites in place, and a
// process that starts in between runs an empty or cut file (seen as the hostile bench failing
// at start in ToolPool.open: "MCP server "hostile" did not start: … Connection closed").
import { renameSync, rmSync, writeFileSync } from 'node:fs';

/**
 * @param {string} path where the file ends up
 * @param {string | Uint8Array} contents
 */
export function writeFileAtomically(path, contents) {
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  try {
    writeFileSync(temporary, contents);
    renameSync(temporary, path);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}
