/**
 * Tools bind lazily: a run ships no catalog into the isolate. Stubs are made on first use, the
 * catalog's list crosses only when a script enumerates `tools` (and to a worker once per
 * catalog), and what the host derives from a bindings array is built once and shared by its
 * runs. Real isolates, both sandbox modes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { DEFAULT_SANDBOX_WORKER_KEPT_CATALOGS } from '../../../src/config/defaults.js';
import { loadPreludeSource } from '../../../src/isolate/assets.js';
import { IsolateEngine, type EngineOutcome } from '../../../src/isolate/engine.js';
import { resolveSandboxLimits, SandboxPool, type SandboxMode } from '../../../src/isolate/index.js';
import { SandboxToolCatalog } from '../../../src/isolate/tool-catalog.js';
import type { SandboxToolBinding, ToolInvocation } from '../../../src/types.js';
import { processCpuMs } from '../../fixtures/thread-cpu.js';

function compile(source: string): string {
  const compiled = compileScript(source);
  if (!compiled.ok) expect.fail(`compile failed: ${compiled.error.message}`);
  return compiled.code;
}

/** `count` tools over `namespaces` namespaces: `ns<k>.tool_<i>`, qualified `server-<k>.tool-<i>`. */
function bindings(count: number, namespaces = 4): SandboxToolBinding[] {
  const tools: SandboxToolBinding[] = [];
  for (let i = 0; i < count; i++) {
    const k = i % namespaces;
    tools.push({ name: `server-${k}.tool-${i}`, namespace: `ns${k}`, member: `tool_${i}` });
  }
  return tools;
}

const echo = async (call: ToolInvocation): Promise<unknown> => ({ name: call.name, args: call.args });

describe('the engine reads the catalog list only when a script enumerates tools', () => {
  let engine: IsolateEngine;
  beforeAll(() => {
    engine = new IsolateEngine({ prelude: loadPreludeSource(), spareMemoryMb: 128 });
  });
  afterAll(() => engine.close());

  /** Runs `source` with a catalog whose list counts its reads; answers every call with `{ n: 1 }`. */
  async function run(source: string): Promise<{ outcome: EngineOutcome; lists: number; calls: string[] }> {
    let lists = 0;
    const calls: string[] = [];
    const limits = resolveSandboxLimits({});
    const runRef: { current?: ReturnType<IsolateEngine['start']> } = {};
    const started = engine.start(
      {
        code: compile(source),
        tools: {
          id: 1,
          maxNameChars: 20,
          lineNames: [],
          store: false,
          list: () => {
            lists++;
            return JSON.stringify([
              ['math', 'add'],
              ['math', 'sub'],
              ['text', 'upper'],
            ]);
          },
        },
        limits,
        wallTimeLeftMs: limits.wallTimeMs,
      },
      {
        output: () => {},
        call: (id, name) => {
          calls.push(name);
          queueMicrotask(() => runRef.current!.settle(id, true, '{"n":1}'));
        },
      },
    );
    runRef.current = started;
    return { outcome: await started.outcome, lists, calls };
  }

  it('a run that only calls tools never reads the list', async () => {
    const { outcome, lists, calls } = await run(
      `const a = await tools.math.add({ a: 1 });
       const b = await callTool('text.upper', {});
       return [a.n, b.n, typeof tools.math.sub, tools.math.add === tools.math.add, tools.math.add.name];`,
    );
    expect(outcome.returnJson).toBe('[1,1,"function",true,"add"]');
    expect(calls).toEqual(['math.add', 'text.upper']);
    expect(lists).toBe(0);
  });

  it('enumerating tools reads the list once and sees every namespace and member', async () => {
    const { outcome, lists } = await run(
      `const namespaces = Object.keys(tools);
       const math = Object.keys(tools.math);
       const known = 'text' in tools, unknown = 'nope' in tools;
       const member = 'upper' in tools.text, missing = 'lower' in tools.text;
       const seen: string[] = [];
       for (const name in tools.text) seen.push(name);
       // A namespace the script froze still answers a name it did not list (the host decides).
       Object.freeze(tools.text);
       const frozen = (await tools.text.lower({})).n;
       return { namespaces, math, known, unknown, member, missing, seen, same: tools.math.add === tools.math.add, frozen };`,
    );
    expect(JSON.parse(outcome.returnJson!)).toEqual({
      namespaces: ['math', 'text'],
      math: ['add', 'sub'],
      known: true,
      unknown: false,
      member: true,
      missing: false,
      seen: ['upper'],
      same: true,
      frozen: 1,
    });
    expect(lists).toBe(1);
  });
});

describe.each<SandboxMode>(['in-process', 'process'])('lazy tools through SandboxPool (%s)', (mode) => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.open({ mode, workers: 1, killGraceMs: 500 });
  });
  afterAll(async () => {
    await pool.close();
  });

  it('lists the tools a run may call, run after run, and each catalog its own', async () => {
    const first = bindings(6, 2);
    const second: SandboxToolBinding[] = [{ name: 'other.only', namespace: 'other', member: 'only' }];
    const code = compile(
      'return Object.fromEntries(Object.keys(tools).map((ns) => [ns, Object.keys((tools as any)[ns])]));',
    );
    const expected = { ns0: ['tool_0', 'tool_2', 'tool_4'], ns1: ['tool_1', 'tool_3', 'tool_5'] };
    // Process mode: the first run sends the list to the worker, the second finds it kept there;
    // past DEFAULT_SANDBOX_WORKER_KEPT_CATALOGS others, the worker and the host both forget it.
    const others = Array.from({ length: DEFAULT_SANDBOX_WORKER_KEPT_CATALOGS }, (_, n) => [
      { name: `other${n}.only`, namespace: `other${n}`, member: 'only' },
    ]);
    const order = [first, first, second, first, ...others, first, others[0]!, second];
    const seen: unknown[] = [];
    for (const tools of order) {
      const result = await pool.run({ code, tools, invoke: echo });
      expect(result.status).toBe('ok');
      seen.push(result.returnValue);
    }
    expect(seen).toEqual(
      order.map((tools) => (tools === first ? expected : { [tools[0]!.namespace]: ['only'] })),
    );
  });

  it('calls through lazy stubs reach the host by qualified name; unknown names get did-you-mean', async () => {
    const tools = bindings(6, 2);
    const result = await pool.run({
      code: compile(
        `const hit = await tools.ns1.tool_3({ x: 1 });
         let miss = '';
         try { await tools.ns1.tool_33({}); } catch (error) { miss = (error as Error).message; }
         console.log(hit.name, JSON.stringify(hit.args), miss);`,
      ),
      tools,
      invoke: echo,
    });
    expect(result.stdout).toBe(
      'server-1.tool-3 {"x":1} Unknown tool "ns1.tool_33". Did you mean: tools.ns1.tool_3, tools.ns1.tool_1, tools.ns1.tool_5?\n',
    );
    expect(result.toolCalls.map((call) => call.tool)).toEqual(['server-1.tool-3']);
  });

  it('the store namespace is no tool of tools, and store is installed only with its bindings', async () => {
    const tools: SandboxToolBinding[] = [
      { name: 'codecall:store.get', namespace: 'codecall_store', member: 'get' },
      { name: 'codecall:store.set', namespace: 'codecall_store', member: 'set' },
      { name: 'a.b', namespace: 'a', member: 'b' },
    ];
    const code = compile('return [Object.keys(tools), typeof store];');
    const withStore = await pool.run({ code, tools, invoke: echo });
    expect(withStore.returnValue).toEqual([['a'], 'object']);
    const without = await pool.run({ code, tools: tools.slice(2), invoke: echo });
    expect(without.returnValue).toEqual([['a'], 'undefined']);
  });
});

describe('per-run work does not scale with the catalog', () => {
  it('builds the name map once per bindings array and shares it', () => {
    const tools = bindings(1_000);
    const catalog = SandboxToolCatalog.of(tools);
    expect(SandboxToolCatalog.of(tools)).toBe(catalog);
    expect(catalog.byName.get('ns3.tool_7')).toBe(tools[7]);
    expect(catalog.byName.get('server-3.tool-7')).toBe(tools[7]);
    expect(SandboxToolCatalog.of([...tools])).not.toBe(catalog);
  });

  it('a run against 50,000 tools takes about as long as one against 10', async () => {
    const pool = await SandboxPool.open({ mode: 'in-process' });
    const small = bindings(10);
    const large = bindings(50_000, 50);
    const code = compile('const r = await tools.ns1.tool_1({}); console.log(r.name);');
    // CPU ms of this process (host and isolate, where per-catalog work would be): unlike wall
    // time, other processes on the cores do not inflate it.
    const time = async (tools: SandboxToolBinding[]): Promise<number> => {
      const started = processCpuMs();
      const result = await pool.run({ code, tools, invoke: echo });
      expect(result.stdout).toBe('server-1.tool-1\n');
      return processCpuMs() - started;
    };
    // The first run of each array builds its per-catalog structures; those are not timed.
    await time(small);
    await time(large);
    const times = { small: [] as number[], large: [] as number[] };
    for (let i = 0; i < 15; i++) {
      times.small.push(await time(small));
      times.large.push(await time(large));
    }
    await pool.close();
    const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!;
    // Binding 50,000 tools per run costs many times more (the figure itself: `npm run bench -- catalog`).
    expect(median(times.large) / median(times.small)).toBeLessThan(2);
  }, 60_000);
});
