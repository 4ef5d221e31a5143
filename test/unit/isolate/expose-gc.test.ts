/**
 * @module
 * A host started with `--expose-gc` gives every new V8 context a non-deletable `gc` global. The
 * sandbox must still start (the prelude cannot delete it) and the script must not see it. The
 * flag is set at runtime in this file's own test process, before the pool creates its isolates.
 */
import { setFlagsFromString } from 'node:v8';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SandboxPool } from '../../../src/isolate/index.js';
import { runScript } from './sandbox-helpers.js';

describe('a host running with --expose-gc (in-process)', () => {
  let pool: SandboxPool;
  beforeAll(async () => {
    setFlagsFromString('--expose-gc');
    pool = await SandboxPool.open({ mode: 'in-process' });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('starts sandboxes and hides gc from the script', async () => {
    const result = await runScript(
      pool,
      "console.log(typeof gc, typeof globalThis.gc, 'gc' in globalThis && globalThis.gc === undefined);",
    );
    expect(result.error).toBeUndefined();
    expect(result.stdout).toBe('undefined undefined true\n');
  });
});
