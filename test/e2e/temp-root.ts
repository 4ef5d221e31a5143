/**
 * @module
 * A throwaway copy of the repository root for end-to-end tests that run commands exactly as a
 * user types them from the root (`codecall exec examples/scripts/over-budget.ts --config
 * examples/codecall.json`). `examples/` is copied, everything else is a symlink to the real
 * root, so whatever a command writes next to its configuration (the usage history in
 * `examples/.codecall/`) lands in the temp dir, never in the work tree.
 */
import { cpSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The real repository root. */
export const REPO_ROOT = resolve(import.meta.dirname, '../..');

/** A temp root: `examples/` copied (without any `.codecall/` state), the rest symlinked. */
export function tempRoot(): { root: string; [Symbol.dispose](): void } {
  const root = mkdtempSync(join(tmpdir(), 'codecall-root-'));
  for (const entry of readdirSync(REPO_ROOT)) {
    if (entry === '.git') continue;
    if (entry === 'examples') {
      cpSync(join(REPO_ROOT, entry), join(root, entry), {
        recursive: true,
        filter: (source) => !source.split(/[\\/]/).includes('.codecall'),
      });
    } else {
      symlinkSync(join(REPO_ROOT, entry), join(root, entry));
    }
  }
  return {
    root,
    [Symbol.dispose]: () => rmSync(root, { recursive: true, force: true }),
  };
}
