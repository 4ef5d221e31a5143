/**
 * @module
 * Loads a package only some users install (a provider SDK, a job queue, a database client): the
 * first use imports it, and a package that is not installed is one `PACKAGE_MISSING` error whose
 * message names the exact install command. A package that is installed but cannot load because
 * something it imports is missing (its own dependency) is not reported as missing: that is
 * rethrown with a hint naming what is missing. Any other import failure is rethrown as it is.
 *
 * Only Node's own not-found messages are read (checked the same in Node 20 and 24):
 *
 * - import: `ERR_MODULE_NOT_FOUND`, `Cannot find package 'pkg' imported from /app/dist/x.js` (the
 *   package name, whatever subpath was asked for; or the path of a main file that is absent), or
 *   `Cannot find module '/app/node_modules/pkg/dist/x.js' imported from …` (a file that is absent);
 * - require: `MODULE_NOT_FOUND`, `Cannot find module 'pkg/sub'` then `Require stack:` and the
 *   importing files (the specifier as written, so an absent package and an absent subpath of an
 *   installed one read the same).
 */
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodecallError } from '../errors.js';

/** What Node could not find (a specifier or a path), and the file that imported it when known. */
interface ModuleNotFound {
  target: string;
  importer: string | undefined;
}

/** The first line of Node's not-found messages: what was not found, and the importer (import only). */
const NOT_FOUND_LINE = /^Cannot find (?:package|module) '(.+?)'(?: imported from (.+)|\. .*)?$/;
/** The first importing file of a require's not-found message. */
const REQUIRE_STACK = /\nRequire stack:\n- ([^\n]+)/;

/** What a module-not-found `error` names, or `undefined` for any other error or message shape. */
function moduleNotFoundOf(error: unknown): ModuleNotFound | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const message = String((error as { message?: unknown }).message ?? '');
  const match = NOT_FOUND_LINE.exec(message.split('\n', 1)[0]!);
  if (match === null) return undefined;
  return { target: match[1]!, importer: match[2] ?? REQUIRE_STACK.exec(message)?.[1] };
}

/** True for a bare specifier (`pkg`, `@scope/pkg/sub`), false for a path or URL. */
function isBareSpecifier(target: string): boolean {
  return !/^(?:\.{1,2}(?:[\\/]|$)|[\\/]|[A-Za-z]:[\\/]|file:)/.test(target);
}

/**
 * The package whose folder holds `path`: the one after the path's last `node_modules`, so a
 * package's nested copy of a dependency is that dependency.
 */
function packageOfPath(path: string): string | undefined {
  const parts = path.split(/[\\/]/);
  const at = parts.lastIndexOf('node_modules');
  const first = at === -1 ? undefined : parts[at + 1];
  if (first === undefined || first === '') return undefined;
  if (!first.startsWith('@')) return first;
  const second = parts[at + 2];
  return second === undefined || second === '' ? undefined : `${first}/${second}`;
}

/**
 * The package a not-found target belongs to: the package of a bare specifier, or the package
 * whose folder holds a path (a relative specifier of a require is resolved against its importer).
 * `undefined` for a file outside any `node_modules`.
 */
function packageOfTarget({ target, importer }: ModuleNotFound): string | undefined {
  if (isBareSpecifier(target)) return packageNameOf(target);
  if (target.startsWith('file:')) return packageOfPath(fileURLToPath(target));
  if (!target.startsWith('.')) return packageOfPath(target);
  return importer === undefined ? undefined : packageOfPath(resolve(dirname(importer), target));
}

/**
 * True when `error` is Node's not-found error for the package `name` itself, as opposed to an
 * installed `name` that cannot load because a package it imports is missing (a different name in
 * the message), or a package whose name merely contains `name` (`openai` is not `ai`).
 *
 * A path counts as `name` itself when it lies in that package's own folder (`…/node_modules/<name>/…`):
 * Node names such a path when the folder is left over empty, when the package's main or `exports`
 * target is absent, or when one of its own files is. A package with its own files missing is, to
 * its user, not installed, and `npm install <name>` is the fix in each case. A path in another
 * package's folder is that package's failure, and a path outside `node_modules` is the
 * application's.
 *
 * @example
 * ```ts
 * try {
 *   await import('pg');
 * } catch (error) {
 *   if (isPackageMissing(error, 'pg')) console.warn('the PostgreSQL store needs: npm install pg');
 *   else throw error;
 * }
 * ```
 */
export function isPackageMissing(error: unknown, name: string): boolean {
  const notFound = moduleNotFoundOf(error);
  return notFound !== undefined && packageOfTarget(notFound) === name;
}

/** The package name of a specifier: `@scope/pkg/sub` → `@scope/pkg`, `pkg/sub` → `pkg`. */
export function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
}

/** The `PACKAGE_MISSING` error for `specifier`, needed by `feature`. */
export function packageMissingError(
  specifier: string,
  feature: string,
  cause?: unknown,
): CodecallError<'PACKAGE_MISSING'> {
  const name = packageNameOf(specifier);
  const install = `npm install ${name}`;
  return new CodecallError(
    'PACKAGE_MISSING',
    `${feature} needs the ${name} package, which is not installed: run \`${install}\`.`,
    {
      details: { package: name, feature, install },
      ...(cause === undefined ? {} : { cause }),
    },
  );
}

/**
 * The error to throw when importing `specifier` for `feature` failed with `error`:
 * `PACKAGE_MISSING` when its package is not installed ({@link isPackageMissing}); when it is
 * installed but a package it imports is not, an `Error` (Node's `code` kept, `error` as its
 * `cause`) that names that package and says the installed one is not the one missing; else
 * `error` itself.
 *
 * @example
 * ```ts
 * try {
 *   return await import('bullmq');
 * } catch (error) {
 *   throw explainImportError(error, 'bullmq', 'The BullMQ jobs backend');
 * }
 * ```
 */
export function explainImportError(error: unknown, specifier: string, feature: string): unknown {
  const notFound = moduleNotFoundOf(error);
  if (notFound === undefined) return error;
  const name = packageNameOf(specifier);
  const missing = packageOfTarget(notFound);
  if (missing === name) return packageMissingError(specifier, feature, error);
  if (missing === undefined) return error;
  const reason = String((error as { message?: unknown }).message).split('\n', 1)[0]!;
  return Object.assign(
    new Error(
      `${feature} loads ${name}, which is installed, but ${name} cannot load: it imports ${missing}, ` +
        `which is not installed or is incomplete. Run \`npm install ${missing}\`, or reinstall ${name}. (${reason})`,
      { cause: error },
    ),
    { code: (error as { code: unknown }).code },
  );
}

/**
 * Imports `specifier` (a module namespace), or throws `PACKAGE_MISSING` naming `npm install <package>`
 * when the package is not installed (see {@link explainImportError} for the other failures).
 *
 * @example
 * ```ts
 * const { Redis } = await importOptional<typeof import('ioredis')>('ioredis', 'The BullMQ jobs backend');
 * ```
 */
export async function importOptional<T>(specifier: string, feature: string): Promise<T> {
  try {
    return (await import(specifier)) as T;
  } catch (error) {
    throw explainImportError(error, specifier, feature);
  }
}
