/**
 * @module
 * Finds the built files the sandbox needs at runtime: the prelude bundled from `sandbox/` by
 * `scripts/build.mjs` (`dist/sandbox/prelude.js`) and the worker entry compiled by tsc
 * (`dist/isolate/worker.js`).
 *
 * Both are looked up with `util/dist-file.ts`, which says where it searches.
 */
import { readFileSync } from 'node:fs';

import { CodecallError } from '../errors.js';
import { findDistFile as findBuilt } from '../util/dist-file.js';

/** Absolute path of a file under `dist/` (e.g. `sandbox/prelude.js`), or a thrown `SANDBOX_UNAVAILABLE`. */
export function findDistFile(relative: string): string {
  const tried: string[] = [];
  const found = findBuilt(relative, tried);
  if (found !== undefined) return found;
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
