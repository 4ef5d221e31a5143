/**
 * @module
 * The prelude's code cache: made first when the prelude is compiled (its top level only, as V8
 * compiles functions when first called), then remade once after the first warm-up, so later
 * isolates, cold ones included, start with the prelude's functions compiled. A real engine.
 */
import { describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { loadPreludeSource } from '../../../src/isolate/assets.js';
import { IsolateEngine } from '../../../src/isolate/engine.js';
import { resolveSandboxLimits } from '../../../src/isolate/limits.js';
import { SandboxToolCatalog } from '../../../src/isolate/tool-catalog.js';

/** Runs `console.log(await tools.t.echo({ n: 1 }))` in a cold isolate (a heap size with no spare). */
async function coldRun(engine: IsolateEngine): Promise<string> {
  const compiled = compileScript('console.log(JSON.stringify(await tools.t.echo({ n: 1 })));');
  if (!compiled.ok) throw new Error(compiled.error.message);
  let printed = '';
  const run = engine.start(
    {
      code: compiled.code,
      tools: SandboxToolCatalog.of([{ name: 't.echo', namespace: 't', member: 'echo' }]).engine,
      limits: resolveSandboxLimits({ memoryMb: 48 }),
      wallTimeLeftMs: 10_000,
    },
    {
      output: (_stream, text) => (printed += text),
      call: (id, _name, args) => setImmediate(() => run.settle(id, true, args)),
    },
  );
  const outcome = await run.outcome;
  expect(outcome.ok).toBe(true);
  return printed.trim();
}

describe('the prelude code cache', () => {
  it('is remade with the functions compiled after the first warm-up, and cold runs use it', async () => {
    const engine = new IsolateEngine({ prelude: loadPreludeSource(), spareMemoryMb: 64 });
    try {
      // A cold isolate first: the cache holds the prelude's top level only.
      expect(await coldRun(engine)).toBe('{"n":1}');
      const topLevel = engine.preludeCacheBytes;
      expect(topLevel).toBeGreaterThan(0);
      engine.warm();
      const warmed = engine.preludeCacheBytes;
      // The functions' bytecode: about 3× the top level's (10 KB → 30 KB today).
      expect(warmed).toBeGreaterThan(2 * topLevel);
      // Isolates made from it run as before, and it is made once.
      expect(await coldRun(engine)).toBe('{"n":1}');
      expect(await coldRun(engine)).toBe('{"n":1}');
      expect(engine.preludeCacheBytes).toBe(warmed);
    } finally {
      engine.close();
    }
  });
});
