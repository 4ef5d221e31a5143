/**
 * @module
 * Loads a package only some users install (a provider SDK, a job queue, a database client): the
 * first use imports it, and a missing package is one `PACKAGE_MISSING` error whose message names
 * the exact install command. Any other import failure (a broken install, a syntax error) is
 * rethrown as it is.
 */
import { CodecallError } from '../errors.js';

/** True when `error` says the package itself (not one of its own imports) could not be found. */
function isMissing(error: unknown, name: string): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return false;
  const message = String((error as { message?: unknown }).message ?? '');
  return message.includes(`'${name}'`) || message.includes(`"${name}"`) || message.includes(`${name}/`);
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
 * Imports `specifier` (a module namespace), or throws `PACKAGE_MISSING` naming `npm install <package>`
 * when the package is not installed.
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
    if (isMissing(error, packageNameOf(specifier))) throw packageMissingError(specifier, feature, error);
    throw error;
  }
}
