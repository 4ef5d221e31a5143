/**
 * @module
 * Adversarial suite: known node:vm / vm2 / safe-eval escape techniques, isolated-vm pitfalls
 * and denial-of-service inputs. Each case asserts what the script could observe (nothing of
 * the host) and that the pool keeps working afterwards. The suite runs with and without
 * sessions (each case in a session of its own, compiled as sessions compile); a last block
 * tries to leak state between sessions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { SandboxPool, type SandboxMode } from '../../../src/isolate/index.js';
import { runScript as runPlain, type RunOptions } from './sandbox-helpers.js';

const VARIANTS: [SandboxMode, 'sessions' | 'no sessions'][] = [
  ['in-process', 'no sessions'],
  ['process', 'no sessions'],
  ['in-process', 'sessions'],
  ['process', 'sessions'],
];

describe.each(VARIANTS)('adversarial scripts (%s, %s)', (mode, sessions) => {
  let sessionCount = 0;
  /** Runs each script in a new session of its own when the variant has sessions. */
  const runScript = (target: SandboxPool, source: string, options: RunOptions = {}) =>
    runPlain(
      target,
      source,
      sessions === 'sessions' ? { session: `adv-${++sessionCount}`, ...options } : options,
    );
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.open({
      mode,
      workers: 1,
      killGraceMs: 500,
      limits: { cpuTimeMs: 500, wallTimeMs: 5_000 },
    });
  });
  afterAll(async () => {
    await pool.close();
  });

  const echo = { 't.echo': (args: Record<string, unknown>) => args };

  it('sees no host globals: process, require, timers, fetch, WebAssembly, SharedArrayBuffer, Atomics, bridge functions', async () => {
    const result = await runScript(
      pool,
      `const names = ['process', 'require', 'module', 'Buffer', 'setTimeout', 'setInterval', 'setImmediate', 'queueMicrotask',
         'fetch', 'WebAssembly', 'SharedArrayBuffer', 'Atomics', 'ivm', '_ivm', '__codecall_out', '__codecall_call',
         '__codecall_done', '__codecall_start', '__codecall_settle'];
       console.log(names.filter((name) => typeof (globalThis as any)[name] !== 'undefined').join(',') || 'none');`,
    );
    expect(result.stdout).toBe('none\n');
  });

  it('cannot reach the host through constructor chains (vm escape)', async () => {
    const result = await runScript(
      pool,
      `const probes = [
         () => (tools as any).constructor.constructor('return typeof process')(),
         () => (callTool as any).constructor('return typeof process')(),
         () => (console.log as any).constructor('return typeof require')(),
         () => this === undefined ? 'undefined' : typeof (this as any).process,
         () => Function('return typeof globalThis.process')(),
         () => eval('typeof process'),
         () => ({}).constructor.constructor('return typeof Buffer')(),
       ];
       console.log(probes.map((probe) => { try { return probe(); } catch (e: any) { return 'threw'; } }).join(','));`,
      { tools: echo },
    );
    expect(result.error).toBeUndefined();
    expect(result.stdout).toBe('undefined,undefined,undefined,undefined,undefined,undefined,undefined\n');
  });

  it('cannot grab bridge functions through stack frames, callers or prepareStackTrace', async () => {
    const result = await runScript(
      pool,
      `const found: string[] = [];
       (Error as any).prepareStackTrace = (_e: unknown, frames: any[]) => {
         for (const frame of frames) {
           const fn = frame.getFunction?.();
           if (typeof fn === 'function' && !String(fn).includes('MARK')) found.push(String(fn).slice(0, 40));
           const self = frame.getThis?.();
           if (self && typeof self === 'object' && self !== globalThis && !('MARK' in self)) found.push('this:' + Object.keys(self));
         }
         return 'stack';
       };
       function MARK_toJSON(this: any) {
         void new Error().stack;
         try { const caller = (MARK_toJSON as any).caller; if (caller) found.push('caller:' + String(caller).slice(0, 40)); } catch { /* strict caller */ }
         return { MARK: 1 };
       }
       await tools.t.echo({ toJSON: MARK_toJSON, MARK: 1 });
       console.log(JSON.stringify(found));`,
      { tools: echo },
    );
    expect(result.stdout).toBe('[]\n');
  });

  it('keeps working when the script replaces JSON, Promise, Object.prototype and console', async () => {
    const seen: unknown[] = [];
    const result = await runScript(
      pool,
      `const log = console.log;
       (JSON as any).stringify = () => '{"hijacked":true}';
       (JSON as any).parse = () => ({ hijacked: true });
       (Object.prototype as any).polluted = 'yes';
       (Promise.prototype as any).then = function () { throw new Error('no then'); };
       const r = tools.t.echo({ a: 1 });
       log(typeof r);`,
      {
        tools: {
          't.echo': (args) => {
            seen.push(args);
            return args;
          },
        },
      },
    );
    expect(seen).toEqual([{ a: 1 }]);
    expect(Object.getOwnPropertyNames(seen[0])).toEqual(['a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(result.stdout).toBe('object\n');
  });

  it('survives a Symbol.species and thenable games', async () => {
    const result = await runScript(
      pool,
      `class Evil extends Promise<unknown> { static get [Symbol.species]() { return function () { throw new Error('species'); }; } }
       (Promise as any)[Symbol.species] = Evil;
       const v = await tools.t.echo({ n: 1 });
       const thenable = { then(resolve: (v: number) => void) { resolve(41); } };
       console.log((v as any).n, await thenable);
       return { then(resolve: (v: number) => void) { resolve(42); } };`,
      { tools: echo },
    );
    expect(result.stdout).toBe('1 41\n');
    expect(result.returnValue).toBe(42);
  });

  it('rejects arguments that cannot be copied: proxies with throwing traps, throwing getters, BigInt, cycles, functions', async () => {
    let calls = 0;
    const result = await runScript(
      pool,
      `const bad: unknown[] = [
         new Proxy({}, { ownKeys() { throw new Error('trap'); } }),
         { get x() { throw new Error('getter'); } },
         { n: 1n },
         (() => { const o: any = {}; o.o = o; return o; })(),
         () => 1,
         'just a string',
       ];
       for (const args of bad) { try { await tools.t.count(args as any); console.log('called'); } catch (e: any) { console.log(e.name); } }`,
      {
        tools: {
          't.count': () => {
            calls++;
            return null;
          },
        },
      },
    );
    expect(calls).toBe(0);
    expect(result.stdout).toBe('TypeError\nTypeError\nTypeError\nTypeError\nTypeError\nTypeError\n');
  });

  it('bounds toJSON infinite loops, hostile thrown values and hostile getters by CPU time', async () => {
    const loop = await runScript(pool, 'await tools.t.echo({ toJSON() { while (true) {} } });', {
      tools: echo,
    });
    expect(loop.error?.code).toBe('CPU_TIMEOUT');
    const getter = await runScript(pool, 'throw { get name() { while (true) {} }, message: "m" };');
    expect(getter.error?.code).toBe('CPU_TIMEOUT');
    const proxy = await runScript(
      pool,
      "throw new Proxy({}, { get() { throw new Error('no'); }, ownKeys() { throw new Error('no'); } });",
    );
    expect(proxy.error?.code).toBe('RUNTIME_ERROR');
    expect(proxy.error?.message).toMatch(/^Uncaught /);
    const throwingMessage = await runScript(
      pool,
      "throw { name: 'E', get message() { throw new Error('x'); }, toString() { throw new Error('y'); } };",
    );
    expect(throwingMessage.error).toEqual({ code: 'RUNTIME_ERROR', message: 'Uncaught E' });
  });

  it('survives huge strings, deep nesting, stack overflow and catastrophic regexes', async () => {
    const huge = await runScript(pool, "let s = 'x'; for (;;) s += s; ", { limits: { memoryMb: 64 } });
    expect(['RUNTIME_ERROR', 'MEMORY_LIMIT']).toContain(huge.error?.code);
    const deep = await runScript(
      pool,
      `let o: any = {}; const root = o; for (let i = 0; i < 100000; i++) { o.c = {}; o = o.c; }
       console.log(root);
       try { await tools.t.echo(root); } catch (e: any) { console.log(e.name); }`,
      { tools: echo },
    );
    expect(deep.stdout).toBe('{ c: { c: { c: { c: { c: { c: { c: [Object] } } } } } } }\nTypeError\n');
    const overflow = await runScript(pool, 'function f(): number { return f() + 1; } f();');
    expect(overflow.error?.message).toMatch(/^Uncaught RangeError: Maximum call stack size exceeded/);
    const redos = await runScript(pool, "/^(a+)+$/.test('a'.repeat(40) + 'b');");
    expect(redos.error?.code).toBe('CPU_TIMEOUT');
  });

  it('runs code that breaks out of the wrapper function under the same globals and limits', async () => {
    // The model code is wrapped in `(async function () {…});`, so `});…(async () => {` closes the
    // wrapper early: what sits between runs at the top level of the script. It must see the same
    // stripped global object and stay under the CPU limit.
    const globals = await runScript(
      pool,
      `}); const seen = [typeof process, typeof require, typeof SharedArrayBuffer, typeof Atomics,
         typeof WebAssembly, typeof (globalThis as any).__codecall_call, typeof (globalThis as any).__codecall_out].join();
       (async () => { console.log(seen)`,
    );
    expect(globals).toMatchObject({ status: 'ok', stdout: `${Array(7).fill('undefined').join()}\n` });
    const spin = await runScript(pool, '}); while (true) {} (async () => {');
    expect(spin.status).toBe('error');
    expect(spin.error?.code).toBe('CPU_TIMEOUT');
    const printed = await runScript(pool, "}); console.log('outside'); (async () => {");
    expect(printed.status).toBe('ok');
    expect(printed.error).toBeUndefined();
    const after = await runScript(pool, "console.log('fine')");
    expect(after.stdout).toBe('fine\n');
  });

  it('cannot block with Atomics.wait or reach shared memory by any route', async () => {
    const result = await runScript(
      pool,
      `const g = globalThis as any;
       const tag = (value: unknown) => { try { return Object.prototype.toString.call(value); } catch { return ''; } };
       const found: string[] = [];
       // by name, on the global object and on a global reached through the Function constructor
       const viaFunction = new Function('return this')();
       for (const name of ['SharedArrayBuffer', 'Atomics', 'WebAssembly']) {
         if (g[name] !== undefined) found.push('global.' + name);
         if (viaFunction[name] !== undefined) found.push('Function.' + name);
       }
       // by brand: every property of the global object, enumerable or not
       for (const name of Object.getOwnPropertyNames(g)) {
         let value: any;
         try { value = g[name]; } catch { continue; }
         if (tag(value) === '[object Atomics]') found.push('brand.' + name);
         if (typeof value === 'function' && tag(value.prototype) === '[object SharedArrayBuffer]') found.push('brand.' + name);
       }
       // by construction: a shared WebAssembly memory, and a typed array's buffer constructor
       try { new g.WebAssembly.Memory({ initial: 1, maximum: 1, shared: true }); found.push('wasm-memory'); } catch {}
       const bufferCtor = Object.getPrototypeOf(new Int32Array(1).buffer).constructor;
       if (tag(new bufferCtor(4)) !== '[object ArrayBuffer]') found.push('typed-array-buffer');
       let built = 'built';
       try { new g.SharedArrayBuffer(4); } catch (error) { built = (error as Error).name; }
       let waited = 'waited';
       try { g.Atomics.wait(new Int32Array(4), 0, 0, 10_000); } catch (error) { waited = (error as Error).name; }
       console.log(JSON.stringify({ found, built, waited }));`,
    );
    expect(JSON.parse(result.stdout)).toEqual({ found: [], built: 'TypeError', waited: 'TypeError' });
  });

  it('runs normally after every attack above', async () => {
    const result = await runScript(pool, 'console.log(await tools.t.echo({ ok: true }));', { tools: echo });
    expect(result.stdout).toBe('{ ok: true }\n');
  });
});

describe.each<SandboxMode>(['in-process', 'process'])('attacks across sessions (%s)', (mode) => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.open({ mode, workers: 1, limits: { cpuTimeMs: 500, wallTimeMs: 5_000 } });
  });
  afterAll(async () => {
    await pool.close();
  });
  const echo = { 't.echo': (args: Record<string, unknown>) => args };
  const PROBE = `const g = globalThis as any;
    console.log(JSON.stringify([
      ({} as any).polluted, typeof [].push, JSON.stringify({ a: 1 }), typeof g.stash, typeof g.savedCallTool,
      Object.keys(Object.prototype).length, typeof (Function.prototype as any).evil, String(Array.prototype.map === [].map),
    ]));`;
  const CLEAN = '[null,"function","{\\"a\\":1}","undefined","undefined",0,"undefined","true"]\n';

  it('prototype pollution and replaced built-ins in one session never reach another session or a plain run', async () => {
    const poisoned = await runPlain(
      pool,
      `(Object.prototype as any).polluted = 'yes';
       (Array.prototype as any).push = () => { throw new Error('poisoned push'); };
       (JSON as any).stringify = () => '"hijacked"';
       (Function.prototype as any).evil = () => 'evil';
       (globalThis as any).stash = await tools.t.echo({ secret: 'A' });
       (globalThis as any).savedCallTool = callTool;`,
      { tools: echo, session: 'a', sessionOwner: 'one' },
    );
    expect(poisoned.error).toBeUndefined();
    for (const options of [
      { session: 'b', sessionOwner: 'one' },
      { session: 'a', sessionOwner: 'two' },
      {},
    ] as RunOptions[]) {
      const seen = await runPlain(pool, PROBE, { tools: echo, ...options });
      expect(seen.stdout).toBe(CLEAN);
    }
    // The poisoned session itself still works for its own owner (its state is its own).
    const own = await runPlain(pool, 'return [({} as any).polluted, (globalThis as any).stash.secret];', {
      tools: echo,
      session: 'a',
      sessionOwner: 'one',
    });
    expect(own.returnValue).toEqual(['yes', 'A']);
  });

  it('a tool stub kept from an earlier run goes through the host checks of the current run', async () => {
    const calls: unknown[] = [];
    const tools = {
      't.echo': (args: Record<string, unknown>) => {
        calls.push(args);
        return args;
      },
    };
    await runPlain(pool, '(globalThis as any).old = tools.t.echo; (globalThis as any).oldCall = callTool;', {
      tools,
      session: 's',
    });
    // The next run binds no tools: the kept stubs are refused by the host as unknown.
    const next = await runPlain(
      pool,
      `const out: string[] = [];
       for (const f of [(globalThis as any).old, (a: unknown) => (globalThis as any).oldCall('t.echo', a)]) {
         try { await f({ leaked: true }); out.push('called'); } catch (e: any) { out.push(e.code); }
       }
       console.log(out.join());`,
      { session: 's' },
    );
    expect(next.stdout).toBe('UNKNOWN_TOOL,UNKNOWN_TOOL\n');
    expect(calls).toEqual([]);
  });

  it('a call left in flight by one run never lands in the next run of the session', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const tools = {
      't.slow': async () => {
        await gate;
        return { late: true };
      },
      't.echo': (args: Record<string, unknown>) => args,
    };
    const first = await runPlain(
      pool,
      "tools.t.slow({}).then((v) => { (globalThis as any).late = v; }, () => { (globalThis as any).late = 'rejected'; }); console.log('left');",
      { tools, session: 'inflight' },
    );
    expect(first.stdout).toBe('left\n');
    release();
    const second = await runPlain(
      pool,
      'await tools.t.echo({}); console.log(String((globalThis as any).late));',
      { tools, session: 'inflight' },
    );
    expect(second.stdout).toBe('undefined\n');
    expect(second.toolCalls.map((call) => call.tool)).toEqual(['t.echo']);
  });

  it('a session that redefines `tools` as non-configurable is dropped, and says so', async () => {
    await runPlain(
      pool,
      "Object.defineProperty(globalThis, 'tools', { value: { fake: true }, configurable: false, writable: false });",
      { session: 'locked' },
    );
    const next = await runPlain(pool, 'console.log(JSON.stringify(tools));', {
      tools: echo,
      session: 'locked',
    });
    expect(next.status).toBe('error');
    expect(next.error?.message).toContain('The session "locked" was discarded');
    const fresh = await runPlain(pool, 'console.log(typeof tools.t.echo);', {
      tools: echo,
      session: 'locked',
    });
    expect(fresh.stdout).toBe('function\n');
  });
});
