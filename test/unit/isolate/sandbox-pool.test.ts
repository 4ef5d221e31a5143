/**
 * @module
 * SandboxPool behaviour in both modes: console capture, tools and callTool, copies across the
 * boundary, real parallelism (measured with a barrier, not timing), every limit, every error
 * path, and the result's records and stats.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  formatResultForModel,
  resolveSandboxLimits,
  SandboxPool,
  type SandboxMode,
} from '../../../src/isolate/index.js';
import { isCodecallError } from '../../../src/errors.js';
import { runScript } from './sandbox-helpers.js';

describe.each<SandboxMode>(['in-process', 'process'])('SandboxPool (%s)', (mode) => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.open({ mode, workers: 2, killGraceMs: 500 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('captures console output, formatting objects readably and circular-safely', async () => {
    const result = await runScript(
      pool,
      `const o: any = { a: 1, list: [1, 'two', { three: 3 }], when: new Date(0) }; o.self = o;
       console.log('hello', 42, o);
       console.info('%s has %d items', 'cart', 3);
       console.warn('careful');
       console.error(new Map([['k', new Set([1])]]));`,
    );
    expect(result.status).toBe('ok');
    expect(result.stdout).toBe(
      "hello 42 {\n  a: 1,\n  list: [ 1, 'two', { three: 3 } ],\n  when: 1970-01-01T00:00:00.000Z,\n  self: [Circular]\n}\ncart has 3 items\n",
    );
    expect(result.stderr).toBe("careful\nMap(1) { 'k' => Set(1) { 1 } }\n");
    expect(result.stats.stdoutBytes).toBe(Buffer.byteLength(result.stdout));
  });

  it('returns a top-level return value as JSON', async () => {
    const result = await runScript(pool, 'const n: number = 2;\nreturn { n, list: [n * 2] };');
    expect(result.returnValue).toEqual({ n: 2, list: [4] });
    const fn = await runScript(pool, 'return () => 1;');
    expect(fn.status).toBe('ok');
    expect(fn.returnValue).toBeUndefined();
  });

  it('calls tools as tools.<namespace>.<member> and callTool, with copies of plain data both ways', async () => {
    const shared = { items: [1, 2, 3] };
    const seen: unknown[] = [];
    const result = await runScript(
      pool,
      `const a = await tools.store.get({ id: 7 });
       a.items.push(99);
       const b = await callTool('store.get', { id: 8 });
       console.log(JSON.stringify(a), JSON.stringify(b), typeof tools.store.get);`,
      {
        tools: {
          'store.get': (args) => {
            seen.push(args);
            return shared;
          },
        },
      },
    );
    expect(result.stdout).toBe('{"items":[1,2,3,99]} {"items":[1,2,3]} function\n');
    expect(shared.items).toEqual([1, 2, 3]);
    expect(seen).toEqual([{ id: 7 }, { id: 8 }]);
    expect(result.toolCalls.map((call) => [call.tool, call.ok, call.argsBytes])).toEqual([
      ['store.get', true, 8],
      ['store.get', true, 8],
    ]);
    expect(result.toolCalls[0]!.resultBytes).toBe(JSON.stringify(shared).length);
    expect(result.stats.toolResultBytes).toBe(2 * JSON.stringify(shared).length);
  });

  it('runs parallel calls really in parallel, up to the concurrency limit (barrier)', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let release: (() => void) | undefined;
    let gate = new Promise<void>((resolve) => (release = resolve));
    const barrier = 3;
    const result = await runScript(
      pool,
      `const out = await Promise.all(Array.from({ length: 9 }, (_, i) => tools.slow.echo({ i })));
       console.log(out.join(','));`,
      {
        limits: { maxConcurrentToolCalls: barrier, wallTimeMs: 10_000 },
        tools: {
          'slow.echo': async (args) => {
            inFlight++;
            maxInFlight = Math.max(maxInFlight, inFlight);
            const mine = gate;
            if (inFlight >= barrier) {
              release!();
              gate = new Promise<void>((resolve) => (release = resolve));
            }
            await mine;
            inFlight--;
            return args.i;
          },
        },
      },
    );
    expect(result.status).toBe('ok');
    expect(result.stdout).toBe('0,1,2,3,4,5,6,7,8\n');
    expect(maxInFlight).toBe(barrier);
  });

  it('by default lets 200 parallel calls of one run be in flight at once (servers cap their own)', async () => {
    const parallel = 200;
    expect(resolveSandboxLimits({}).maxConcurrentToolCalls).toBeGreaterThanOrEqual(parallel);
    let inFlight = 0;
    let maxInFlight = 0;
    let release!: () => void;
    const everyoneArrived = new Promise<void>((resolve) => (release = resolve));
    // Each call waits until all of them are in flight: a lower default cap never gets there and
    // the run ends at its wall time instead.
    const result = await runScript(
      pool,
      `const out = await Promise.all(Array.from({ length: ${parallel} }, (_, i) => tools.slow.echo({ i })));
       console.log(out.length);`,
      {
        limits: { wallTimeMs: 10_000 },
        tools: {
          'slow.echo': async (args) => {
            inFlight++;
            maxInFlight = Math.max(maxInFlight, inFlight);
            if (inFlight === parallel) release();
            await everyoneArrived;
            return args.i;
          },
        },
      },
    );
    expect(result.status).toBe('ok');
    expect(result.stdout).toBe(`${parallel}\n`);
    expect(maxInFlight).toBe(parallel);
  });

  it('completes 1,000 parallel tool calls', async () => {
    const result = await runScript(
      pool,
      `const r = await Promise.all(Array.from({ length: 1000 }, (_, i) => tools.m.id({ i })));
       console.log(r.reduce((a, b) => a + b, 0));`,
      { tools: { 'm.id': (args) => args.i } },
    );
    expect(result.stdout).toBe(`${(999 * 1000) / 2}\n`);
    expect(result.toolCalls).toHaveLength(1000);
  });

  it('rejects a failing tool with a readable Error and no host stack or paths', async () => {
    const result = await runScript(
      pool,
      `try { await tools.svc.fail({}); } catch (error: any) {
         console.log(error instanceof Error, error.name, error.message);
         console.log(String(error.stack).includes('/'));
       }
       await tools.svc.fail({});`,
      {
        tools: {
          'svc.fail': () => {
            throw new Error('quota exceeded for project alpha');
          },
        },
      },
    );
    expect(result.stdout).toBe('true ToolError quota exceeded for project alpha\nfalse\n');
    expect(result.status).toBe('error');
    expect(result.error?.code).toBe('RUNTIME_ERROR');
    expect(result.error?.message).toContain('Uncaught ToolError: quota exceeded for project alpha');
    expect(JSON.stringify(result)).not.toMatch(/node_modules|\/work\/|run-controller/);
    expect(result.toolCalls.map((call) => call.ok)).toEqual([false, false]);
    expect(result.toolCalls[0]!.error).toBe('quota exceeded for project alpha');
  });

  it('points an uncaught tool error at the line of the call in the model code', async () => {
    const fail = () => {
      throw new Error('no such repository');
    };
    const result = await runScript(
      pool,
      [
        '```ts',
        'const first: number = await tools.svc.ok({});',
        'async function load(name: string) {',
        '  return tools.svc.fail({ name });',
        '}',
        'console.log(first);',
        'await load("codecall");',
        '```',
      ].join('\n'),
      { tools: { 'svc.ok': () => 1, 'svc.fail': fail } },
    );
    expect(result.stdout).toBe('1\n');
    expect(result.error?.code).toBe('RUNTIME_ERROR');
    expect(result.error?.message).toMatch(
      /^Uncaught ToolError: no such repository\n {4}at load line 4, column \d+\n {4}at line 7, column \d+/,
    );
    const caught = await runScript(
      pool,
      `const results = await Promise.allSettled([tools.svc.ok({}), tools.svc.fail({})]);
       const error = (results[1] as PromiseRejectedResult).reason;
       console.log(String(error.stack).split('\\n')[0]);`,
      { tools: { 'svc.ok': () => 1, 'svc.fail': fail } },
    );
    expect(caught.stdout).toBe('ToolError: no such repository\n');
    // Past the first 100 calls of a run the line comes from V8's async stack trace instead.
    const late = await runScript(
      pool,
      'for (let i = 0; i < 100; i++) await tools.svc.ok({});\nconst rows = await tools.svc.fail({});',
      { tools: { 'svc.ok': () => 1, 'svc.fail': fail } },
    );
    expect(late.error?.message).toMatch(/^Uncaught ToolError: no such repository\n {4}at line 2, column \d+/);
  });

  it('passes non-Error tool failures and non-JSON results as readable messages', async () => {
    const result = await runScript(
      pool,
      `for (const name of ['str', 'big', 'undef']) {
         try { console.log(name, await callTool('t.' + name, {})); } catch (e: any) { console.log(name, 'failed:', e.message); }
       }`,
      {
        tools: {
          't.str': () => Promise.reject('plain string'),
          't.big': () => ({ n: 10n }),
          't.undef': () => undefined,
        },
      },
    );
    expect(result.stdout).toBe(
      'str failed: plain string\nbig failed: The result of t.big is not JSON data (Do not know how to serialize a BigInt).\nundef undefined\n',
    );
  });

  it('answers an unknown tool with close matches', async () => {
    const result = await runScript(
      pool,
      `try { await callTool('github.serch_issues', {}); } catch (e: any) { console.log(e.message); }
       try { await tools.github.search_isues({}); } catch (e: any) { console.log(e.message); }`,
      { tools: { 'github.search_issues': () => [], 'github.get_issue': () => ({}) } },
    );
    expect(result.stdout).toBe(
      'Unknown tool "github.serch_issues". Did you mean: tools.github.search_issues?\n' +
        'Unknown tool "github.search_isues". Did you mean: tools.github.search_issues?\n',
    );
    expect(result.toolCalls).toEqual([]);
  });

  it('maps a runtime error to the line and column of the model code', async () => {
    const result = await runScript(
      pool,
      '```ts\ninterface Row { id: number }\nconst rows: Row[] = [{ id: 1 }];\n\nfunction pick(r: Row | undefined): number {\n  return (r as any).missing.id;\n}\nconsole.log(pick(rows[0]));\n```',
    );
    expect(result.status).toBe('error');
    expect(result.error?.code).toBe('RUNTIME_ERROR');
    expect(result.error?.message).toMatch(
      /^Uncaught TypeError: Cannot read properties of undefined \(reading 'id'\)\n {4}at pick line 6, column \d+\n {4}at line 8/,
    );
  });

  it('reports thrown non-Error values', async () => {
    const cases: [string, string][] = [
      ['throw 42;', 'Uncaught 42'],
      ["throw 'oops';", 'Uncaught "oops"'],
      ['throw null;', 'Uncaught null'],
      ['throw undefined;', 'Uncaught undefined'],
      ["throw { reason: 'x' };", "Uncaught { reason: 'x' }"],
    ];
    for (const [source, message] of cases) {
      const result = await runScript(pool, source);
      expect(result.error).toEqual({ code: 'RUNTIME_ERROR', message });
    }
  });

  it('ends a script that waits on a promise that can never settle, without waiting for the wall timer', async () => {
    const result = await runScript(pool, 'await new Promise(() => {});', { limits: { wallTimeMs: 60_000 } });
    expect(result.error?.code).toBe('RUNTIME_ERROR');
    expect(result.error?.message).toContain('can never settle');
  });

  describe('limits', () => {
    it('stops at the wall time, including time awaiting tools, and aborts the tool signal', async () => {
      let aborted = false;
      const result = await runScript(pool, "console.log('before'); await tools.t.hang({});", {
        limits: { wallTimeMs: 300 },
        tools: {
          't.hang': (_args, { signal }) =>
            new Promise((resolve) => {
              signal.addEventListener('abort', () => {
                aborted = true;
                resolve(null);
              });
            }),
        },
      });
      expect(result.error?.code).toBe('WALL_TIMEOUT');
      expect(result.error?.message).toContain('300 ms');
      expect(result.stdout).toBe('before\n');
      expect(aborted).toBe(true);
    });

    it('stops a synchronous loop at the CPU time', async () => {
      const result = await runScript(pool, 'let i = 0; while (true) i++;', { limits: { cpuTimeMs: 200 } });
      expect(result.error?.code).toBe('CPU_TIMEOUT');
      expect(result.error?.message).toContain('200 ms of CPU');
    });

    it('stops a loop after an await at the CPU time', async () => {
      const result = await runScript(pool, "await tools.t.ok({}); console.log('awaited'); while (true) {}", {
        limits: { cpuTimeMs: 200 },
        tools: { 't.ok': () => 1 },
      });
      expect(result.error?.code).toBe('CPU_TIMEOUT');
      expect(result.stdout).toBe('awaited\n');
    });

    it('stops CPU spent in many short slices between fast tool calls at the CPU time', async () => {
      // Each slice is far shorter than the smallest timeout of one entry into the isolate (1 ms), so
      // only the CPU checks around every entry (each settle after an await) stop this script: the
      // 20,000 slices (about 10 µs each) need several times the budget of 100 ms. (In process mode, without those
      // checks, it runs to the end; in-process, host jitter trips an entry's timeout now and then.)
      let calls = 0;
      const result = await runScript(
        pool,
        `for (let i = 0; i < 20_000; i++) {
           let x = 0;
           for (let j = 0; j < 5_000; j++) x += j % 7;
           await tools.t.tick({ x });
         }
         console.log('finished');`,
        {
          limits: { cpuTimeMs: 100, wallTimeMs: 120_000, maxToolCalls: 100_000 },
          tools: { 't.tick': () => ++calls },
        },
      );
      expect(result.error?.code).toBe('CPU_TIMEOUT');
      expect(result.stdout).toBe('');
      expect(calls).toBeGreaterThan(0);
      expect(calls).toBeLessThan(20_000);
    });

    it('counts the CPU of compiling the script, even when the script then ends at once', async () => {
      // Compiling ~200 KB takes far more than 1 ms of CPU; running it takes less than the entry's
      // timeout, so only the CPU check after the entry sees the budget was spent.
      const source = `let x = 0;\n${'x += 1;\n'.repeat(25_000)}console.log(x);`;
      const result = await runScript(pool, source, { limits: { cpuTimeMs: 1 } });
      expect(result.error?.code).toBe('CPU_TIMEOUT');
    });

    it('stops an async microtask loop at the CPU time', async () => {
      const result = await runScript(pool, 'while (true) await null;', { limits: { cpuTimeMs: 200 } });
      expect(result.error?.code).toBe('CPU_TIMEOUT');
    });

    it('stops at the memory limit', async () => {
      const result = await runScript(
        pool,
        'const keep = []; while (true) keep.push(new Array(100_000).fill(1.5));',
        {
          limits: { memoryMb: 16, cpuTimeMs: 10_000 },
        },
      );
      expect(result.error?.code).toBe('MEMORY_LIMIT');
      expect(result.error?.message).toContain('16 MB');
    });

    it('reports a syntax error as the script error, told by its name, not as a crash', async () => {
      // esbuild does not check regex syntax; V8 refuses a duplicate group name when it compiles.
      const result = await runScript(pool, 'const pattern = /(?<a>x)(?<a>y)/; console.log(pattern);');
      expect(result.error?.code).toBe('RUNTIME_ERROR');
      expect(result.error?.message).toMatch(/SyntaxError/);
    });

    it('limits tool calls per run', async () => {
      const result = await runScript(
        pool,
        `let ok = 0, refused = '';
         for (let i = 0; i < 8; i++) { try { await tools.t.one({}); ok++; } catch (e: any) { refused = e.name + ': ' + e.message; } }
         console.log(ok, refused);
         await tools.t.one({});`,
        { limits: { maxToolCalls: 5 }, tools: { 't.one': () => 1 } },
      );
      expect(result.stdout).toBe(
        '5 ToolLimitError: Tool call limit reached: a script may make at most 5 tool calls. Fetch data in fewer, larger calls and print a summary.\n',
      );
      expect(result.toolCalls).toHaveLength(5);
      expect(result.error?.code).toBe('TOOL_CALL_LIMIT');
    });

    it('gives host error codes only to errors the host raised, never to a script’s own', async () => {
      const forged = await runScript(
        pool,
        `const e: any = new Error('Tool call limit reached: a script may make at most 5 tool calls.');
         e.code = 'TOOL_CALL_LIMIT';
         throw e;`,
      );
      expect(forged.status).toBe('error');
      expect(forged.error?.code).toBe('RUNTIME_ERROR');
      const forgedResult = await runScript(
        pool,
        "throw Object.assign(new Error('over'), { name: 'ToolLimitError', code: 'TOOL_RESULT_LIMIT' });",
      );
      expect(forgedResult.error?.code).toBe('RUNTIME_ERROR');
      // A script that raised the limit for real, caught it and threw a lookalike with another
      // message is not the host's verdict either.
      const lookalike = await runScript(
        pool,
        `try { await tools.t.one({}); await tools.t.one({}); } catch (e: any) {
           throw Object.assign(new Error('made up'), { code: e.code });
         }`,
        { limits: { maxToolCalls: 1 }, tools: { 't.one': () => 1 } },
      );
      expect(lookalike.error?.code).toBe('RUNTIME_ERROR');
    });

    it('limits the bytes of one call’s arguments', async () => {
      let called = false;
      const result = await runScript(
        pool,
        `try { await tools.t.put({ blob: 'x'.repeat(200) }); } catch (e: any) { console.log(e.message); }
         try { await tools.t.put({ blob: 'é'.repeat(60) }); } catch (e: any) { console.log(e.message); }`,
        {
          limits: { maxToolArgsBytes: 100 },
          tools: {
            't.put': () => {
              called = true;
              return null;
            },
          },
        },
      );
      expect(result.stdout).toBe(
        // One message, whichever side refused (the sandbox the first call, the host the second).
        'Arguments of t.put are 211 bytes of JSON; the limit is 100. Pass less data per call (split it over several calls).\n' +
          'Arguments of t.put are 131 bytes of JSON; the limit is 100. Pass less data per call (split it over several calls).\n',
      );
      expect(called).toBe(false);
    });

    it('limits the bytes of one tool result and of all results', async () => {
      const result = await runScript(
        pool,
        `try { await tools.t.big({}); } catch (e: any) { console.log(e.code, e.message); }
         let got = 0;
         for (let i = 0; i < 5; i++) { try { await tools.t.small({}); got++; } catch (e: any) { console.log(e.code, e.message); } }
         console.log(got);`,
        {
          limits: { maxToolResultBytes: 1_000, maxTotalToolResultBytes: 2_500 },
          tools: { 't.big': () => 'x'.repeat(2_000), 't.small': () => 'y'.repeat(998) },
        },
      );
      expect(result.stdout).toBe(
        'TOOL_RESULT_LIMIT The result of t.big is 2002 bytes of JSON; the limit for one tool result is 1000. Ask for less (filter, paginate, or select fields).\n' +
          'TOOL_RESULT_LIMIT Tool results of this run would exceed 2500 bytes in total (2000 received so far). Ask tools for less data.\n' +
          'TOOL_RESULT_LIMIT Tool results of this run would exceed 2500 bytes in total (2000 received so far). Ask tools for less data.\n' +
          'TOOL_RESULT_LIMIT Tool results of this run would exceed 2500 bytes in total (2000 received so far). Ask tools for less data.\n' +
          '2\n',
      );
      expect(result.stats.toolResultBytes).toBe(2_000);
      const uncaught = await runScript(pool, 'await tools.t.big({});', {
        limits: { maxToolResultBytes: 10 },
        tools: { 't.big': () => 'x'.repeat(100) },
      });
      expect(uncaught.error?.code).toBe('TOOL_RESULT_LIMIT');
    });

    it('truncates stdout and stderr with a marker that says how to narrow the output', async () => {
      const result = await runScript(
        pool,
        "for (let i = 0; i < 1000; i++) console.log('line ' + i); for (let i = 0; i < 100; i++) console.error('é'.repeat(10));",
        { limits: { maxStdoutBytes: 100, maxStderrBytes: 50 } },
      );
      expect(result.status).toBe('ok');
      const total = Array.from({ length: 1000 }, (_, i) => `line ${i}\n`).join('');
      expect(result.stdout).toBe(
        `${total.slice(0, 100)}\n[output truncated: 100 of ${Buffer.byteLength(total)} bytes shown — print less: aggregate, slice, or select fields]\n`,
      );
      expect(result.stats.stdoutBytes).toBe(Buffer.byteLength(total));
      expect(result.stderr).toBe(
        `${'é'.repeat(10)}\n${'é'.repeat(10)}\n${'é'.repeat(4)}\n[output truncated: 50 of 2100 bytes shown — print less: aggregate, slice, or select fields]\n`,
      );
    });

    it('rejects invalid limits naming the field', async () => {
      expect(() => resolveSandboxLimits({ cpuTimeMs: -1 })).toThrow(/cpuTimeMs/);
      expect(() => resolveSandboxLimits({ wallTimeMS: 5 } as never)).toThrow(
        /Unknown sandbox limit "wallTimeMS"/,
      );
      await expect(runScript(pool, '1', { limits: { memoryMb: 2 } })).rejects.toSatisfy(
        (error) => isCodecallError(error) && error.code === 'INVALID_ARGUMENT',
      );
    });
  });

  it('cancels a run through its signal', async () => {
    const controller = new AbortController();
    const running = runScript(pool, 'await tools.t.hang({});', {
      signal: controller.signal,
      tools: {
        't.hang': () => {
          controller.abort();
          return new Promise(() => {});
        },
      },
    });
    const result = await running;
    expect(result.error?.code).toBe('ABORTED');
  });

  it('keeps __proto__ keys from polluting either side', async () => {
    let hostArgs: Record<string, unknown> | undefined;
    const result = await runScript(
      pool,
      `const evil = JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}, "ok": 1}');
       const back = await tools.t.echo(evil);
       console.log(({} as any).polluted, Object.keys(back).join(','), (back as any).polluted);`,
      {
        tools: {
          't.echo': (args) => {
            hostArgs = args;
            return JSON.parse(
              '{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}}',
            );
          },
        },
      },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(hostArgs)).toBe(Object.prototype);
    expect(Object.keys(hostArgs!)).toEqual(['constructor', 'ok']);
    expect(result.stdout).toBe('undefined __proto__,constructor undefined\n');
  });

  it('counts argument bytes as UTF-8 and drops __proto__ keys in short and long arguments alike', async () => {
    // Characters of 1 to 4 bytes, lone surrogates (escaped by JSON.stringify) and a __proto__ key.
    const texts = ['a_b', 'é', '€', '😀', '\uD83D', '\uDE00', 'x__y'];
    const seen: unknown[] = [];
    const result = await runScript(
      pool,
      `const texts = ${JSON.stringify(texts)};
       for (const size of [1, 40]) {
         for (const text of texts) await tools.t.echo({ text: text.repeat(size) });
         await tools.t.echo(JSON.parse('{"__proto__": {"polluted": "yes"}, "pad": "' + '_'.repeat(size * 4) + '"}'));
       }`,
      {
        tools: {
          't.echo': (args) => {
            seen.push(args);
            return 1;
          },
        },
      },
    );
    expect(result.status).toBe('ok');
    const sent = [1, 40].flatMap((size) => [
      ...texts.map((text) => JSON.stringify({ text: text.repeat(size) })),
      JSON.stringify({ ['__proto__']: { polluted: 'yes' }, pad: '_'.repeat(size * 4) }),
    ]);
    expect(sent.some((json) => json.length < 128) && sent.some((json) => json.length > 128)).toBe(true);
    expect(result.toolCalls.map((call) => call.argsBytes)).toEqual(
      sent.map((json) => Buffer.byteLength(json)),
    );
    for (const size of [1, 40]) {
      const protoArgs = seen[texts.length + (size === 1 ? 0 : texts.length + 1)] as Record<string, unknown>;
      expect(Object.getPrototypeOf(protoArgs)).toBe(Object.prototype);
      expect(Object.keys(protoArgs)).toEqual(['pad']);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('renders stdout, stderr and the exit status for the model in one place', async () => {
    const result = await runScript(
      pool,
      "console.log('out'); console.error('err'); throw new RangeError('bad');",
    );
    expect(formatResultForModel(result)).toBe(
      'stdout:\nout\n\nstderr:\nerr\n\nexit status: error (RUNTIME_ERROR)\nUncaught RangeError: bad\n    at line 1, column 49',
    );
    const ok = await runScript(pool, 'await tools.t.a({}); return 1;', { tools: { 't.a': () => 1 } });
    expect(formatResultForModel(ok)).toBe(
      'stdout: (empty)\n\nreturn value: 1\n\nexit status: ok after 1 tool call',
    );
  });

  it('reports stats', async () => {
    const result = await runScript(pool, 'let x = 0; for (let i = 0; i < 1e6; i++) x += i; console.log(x);');
    expect(result.stats.cpuMs).toBeGreaterThan(0);
    expect(result.stats.wallMs).toBeGreaterThanOrEqual(result.stats.cpuMs * 0.5);
    expect(result.stats.stdoutBytes).toBe(result.stdout.length);
  });
});
