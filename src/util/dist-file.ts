/**
 * @module
 * Finds a file of the build (`dist/`) at runtime: worker entries and the sandbox prelude.
 *
 * The host runs from `dist/<folder>/*.js` in production, from `src/<folder>/*.ts` under vitest
 * and from a bundle in `.bench-out/` under `npm run bench`; so a file is looked up by walking up
 * a few directories from this module, as a path inside `dist/` when the walk reaches `dist/`,
 * else in a `dist/` folder next to an ancestor. Tests and benches need `npm run build` first
 * (the vitest global setup does it).
 */
import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Ancestor directories searched for `dist/`. */
const MAX_ASCENT = 4;

/**
 * Absolute path of `relative` under `dist/` (e.g. `execute/search-worker.js`), or `undefined`;
 * `tried` receives every path looked at, for an error message.
 */
export function findDistFile(relative: string, tried: string[] = []): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let level = 0; level <= MAX_ASCENT; level++) {
    const candidate = basename(dir) === 'dist' ? join(dir, relative) : join(dir, 'dist', relative);
    tried.push(candidate);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return undefined;
}
