/**
 * @module
 * Finds the built files the sandbox needs at runtime: the prelude bundled from `sandbox/` by
 * `scripts/build.mjs` (`dist/sandbox/prelude.js`) and the worker entry compiled by tsc
 * (`dist/isolate/worker.js`).
 *
 * The host runs from `dist/isolate/*.js` in production, from `src/isolate/*.ts` under vitest
 * and from a bundle in `.bench-out/` under `npm run bench`; so each file is looked up relative
 * to this module by walking up a few directories, first as a sibling inside `dist/`, then in a
 * `dist/` folder next to an ancestor. Tests and benches therefore need `npm run build` first
 * (the vitest global setup does it).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { CodecallError } from '../errors.js';

/** Ancestor directories searched for `dist/`. */
const MAX_ASCENT = 4;

/** Absolute path of a file under `dist/` (e.g. `sandbox/prelude.js`), or a thrown `SANDBOX_UNAVAILABLE`. */
export function findDistFile(relative: string): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  const tried: string[] = [];
  for (let level = 0; level <= MAX_ASCENT; level++) {
    const candidates = basename(dir) === 'dist' ? [join(dir, relative)] : [join(dir, 'dist', relative)];
    for (const candidate of candidates) {
      tried.push(candidate);
      if (existsSync(candidate)) return candidate;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new CodecallError(
    'SANDBOX_UNAVAILABLE',
    `The sandbox file dist/${relative} was not found. Run \`npm run build\` (it bundles sandbox/ and compiles src/).`,
    { details: { tried } },
  );
}

let prelude: string | undefined;

/** Source text of the sandbox prelude (read once). */
export function loadPreludeSource(): string {
  prelude ??= readFileSync(findDistFile('sandbox/prelude.js'), 'utf8');
  return prelude;
}
