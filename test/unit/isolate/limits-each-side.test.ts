/**
 * @module
 * Every sandbox limit is enforced twice, by the prelude (before a call crosses) and by the host's
 * RunController, with the messages of src/isolate/limit-table.ts. Each side is proven here alone:
 *
 * - the host by itself: a real engine runs a test build of the prelude whose own checks are off
 *   (test/fixtures/prelude-without-checks.ts), so every call and byte reaches the host, which
 *   must refuse or cut exactly at the limit;
 * - the prelude by itself: the shipped prelude runs against a sink that answers every call and
 *   keeps every byte (no host limits at all), so any refusal or cut is the prelude's.
 */
import { afterAll, describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { IsolateEngine } from '../../../src/isolate/engine.js';
import { LIMIT_MESSAGES, SANDBOX_LIMIT_TABLE } from '../../../src/isolate/limit-table.js';
import { resolveSandboxLimits, type SandboxLimits } from '../../../src/isolate/limits.js';
import { RunController } from '../../../src/isolate/run-controller.js';
import { SandboxToolCatalog } from '../../../src/isolate/tool-catalog.js';
import type { ExecutionResult, SandboxToolBinding, ToolInvocation } from '../../../src/types.js';
import { preludeSource } from '../../fixtures/prelude-without-checks.js';

const tools: SandboxToolBinding[] = [{ name: 't.echo', namespace: 't', member: 'echo' }];

function compile(source: string): string {
  const compiled = compileScript(source);
  if (!compiled.ok) throw new Error(compiled.error.message);
  return compiled.code;
}

describe('sandbox limits, each side alone', () => {
  const hostOnly = new IsolateEngine({ prelude: preludeSource({ checks: false }), spareMemoryMb: 64 });
  const shipped = new IsolateEngine({ prelude: preludeSource({ checks: true }), spareMemoryMb: 64 });
  afterAll(() => {
    hostOnly.close();
    shipped.close();
  });

  /** Runs `source` on the host-only engine through a real RunController; counts what reached the invoker. */
  async function onHost(
    source: string,
    limits: Partial<SandboxLimits>,
    invoke: (call: ToolInvocation) => unknown = ({ args }) => args,
  ): Promise<{ result: ExecutionResult; invoked: number; crossed: number }> {
    const code = compile(source);
    const resolved = resolveSandboxLimits({ memoryMb: 64, ...limits });
    let invoked = 0;
    let crossed = 0;
    const controller = new RunController({
      code,
      tools,
      limits: resolved,
      invoke: async (call) => {
        invoked++;
        return invoke(call);
      },
    });
    const result = await controller.run((sink) =>
      hostOnly.start(
        {
          code,
          tools: SandboxToolCatalog.of(tools).engine,
          limits: resolved,
          wallTimeLeftMs: controller.wallTimeLeftMs(),
        },
        {
          output: (stream, text, dropped) => sink.output(stream, text, dropped),
          call: (id, name, args, site) => {
            crossed++;
            sink.call(id, name, args, site);
          },
        },
      ),
    );
    return { result, invoked, crossed };
  }

  /**
   * Runs `source` on the shipped prelude against a sink with no limits: every call that crosses
   * is answered with its arguments, every byte printed is kept.
   */
  async function inSandbox(
    source: string,
    limits: Partial<SandboxLimits>,
  ): Promise<{ printed: string[]; crossed: number; returnJson: string | undefined }> {
    const code = compile(source);
    const printed = ['', ''];
    let crossed = 0;
    const run = shipped.start(
      {
        code,
        tools: SandboxToolCatalog.of(tools).engine,
        limits: resolveSandboxLimits({ memoryMb: 64, ...limits }),
        wallTimeLeftMs: 30_000,
      },
      {
        output: (stream, text) => (printed[stream] += text),
        call: (id, _name, args) => {
          crossed++;
          setImmediate(() => run.settle(id, true, args));
        },
      },
    );
    const outcome = await run.outcome;
    if (!outcome.ok && outcome.thrown === undefined) throw new Error(JSON.stringify(outcome.fault));
    return { printed, crossed, returnJson: outcome.returnJson };
  }

  const countCalls = `let ok = 0; const refused = new Set<string>();
    for (let i = 0; i < 6; i++) {
      try { await tools.t.echo({ i }); ok++; } catch (e: any) { refused.add(e.code + ' ' + e.message); }
    }
    console.log(ok, [...refused].join(' | '));`;

  it('lists every limit the two sides share, with the field that sets it', () => {
    const both = Object.entries(SANDBOX_LIMIT_TABLE)
      .filter(([, row]) => row.sides === 'both')
      .map(([name]) => name);
    expect(both).toEqual([
      'toolCalls',
      'toolName',
      'toolArgs',
      'pendingToolArgs',
      'stdout',
      'stderr',
      'returnValue',
    ]);
  });

  describe('the host alone (prelude checks off)', () => {
    it('tool calls: exactly maxToolCalls calls are made, the next is refused', async () => {
      const { result, invoked, crossed } = await onHost(`${countCalls} await tools.t.echo({});`, {
        maxToolCalls: 3,
      });
      // Every call crossed: the refusals are the host's own.
      expect(crossed).toBe(7);
      expect(invoked).toBe(3);
      expect(result.stdout).toBe(`3 TOOL_CALL_LIMIT ${LIMIT_MESSAGES.toolCalls(3)}\n`);
      expect(result.toolCalls).toHaveLength(3);
      expect(result.error?.code).toBe('TOOL_CALL_LIMIT');
    });

    it('tool calls: a run that stops at the limit is not refused', async () => {
      const { result, invoked } = await onHost(
        'for (let i = 0; i < 3; i++) await tools.t.echo({ i }); console.log("done");',
        { maxToolCalls: 3 },
      );
      expect(invoked).toBe(3);
      expect(result.status).toBe('ok');
      expect(result.stdout).toBe('done\n');
    });

    it('tool name length', async () => {
      const name = `t.${'x'.repeat(40)}`;
      const { result, crossed } = await onHost(
        `try { await callTool(${JSON.stringify(name)}, {}); } catch (e: any) { console.log(e.code, e.message); }`,
        { maxToolNameChars: 20 },
      );
      expect(crossed).toBe(1);
      expect(result.stdout).toBe(`UNKNOWN_TOOL ${LIMIT_MESSAGES.toolName(name, 20)}\n`);
    });

    it('bytes of one call’s arguments', async () => {
      const { result, invoked, crossed } = await onHost(
        `try { await tools.t.echo({ blob: 'x'.repeat(200) }); } catch (e: any) { console.log(e.code, e.message); }
         await tools.t.echo({ blob: 'x'.repeat(80) });`,
        { maxToolArgsBytes: 100 },
      );
      expect(crossed).toBe(2);
      expect(invoked).toBe(1);
      expect(result.stdout).toBe(`TOOL_ARGS_LIMIT ${LIMIT_MESSAGES.toolArgs('t.echo', 211, 100)}\n`);
    });

    it('bytes of arguments waiting for an answer', async () => {
      // Each call costs 211 bytes of JSON + 6 of name + 64: one fits in 500, a second does not.
      const { result, crossed } = await onHost(
        `const settled = await Promise.allSettled([1, 2].map(() => tools.t.echo({ blob: 'x'.repeat(200) })));
         for (const s of settled) console.log(s.status === 'fulfilled' ? 'ok' : (s.reason as any).code + ' ' + (s.reason as any).message);`,
        { maxPendingToolArgsBytes: 500 },
      );
      expect(crossed).toBe(2);
      expect(result.stdout).toBe(`ok\nTOOL_ARGS_LIMIT ${LIMIT_MESSAGES.pendingToolArgs(281, 281, 500)}\n`);
    });

    it('stdout and stderr bytes', async () => {
      const { result } = await onHost(
        `for (let i = 0; i < 20; i++) { console.log('o'.repeat(20)); console.error('e'.repeat(20)); }`,
        { maxStdoutBytes: 50, maxStderrBytes: 30 },
      );
      expect(result.stdout).toBe(
        `${'o'.repeat(20)}\n${'o'.repeat(20)}\n${'o'.repeat(8)}\n${LIMIT_MESSAGES.output(50, 420)}`,
      );
      expect(result.stderr).toBe(`${'e'.repeat(20)}\n${'e'.repeat(9)}\n${LIMIT_MESSAGES.output(30, 420)}`);
      expect(result.stats.stdoutBytes).toBe(420);
    });

    it('bytes of the return value', async () => {
      const { result } = await onHost(`return { blob: 'x'.repeat(100) };`, { maxStdoutBytes: 50 });
      expect(result.returnValue).toBeUndefined();
      expect(result.stderr).toBe(LIMIT_MESSAGES.returnValue(50));
    });

    it('bytes of one tool result and of all results (host-only limits)', async () => {
      const { result } = await onHost(
        `for (const n of [150, 60, 60]) {
           try { await tools.t.echo({ n }); console.log('ok'); } catch (e: any) { console.log(e.code, e.message); }
         }`,
        { maxToolResultBytes: 100, maxTotalToolResultBytes: 100 },
        ({ args }) => 'x'.repeat((args as { n: number }).n - 2),
      );
      expect(result.stdout).toBe(
        `TOOL_RESULT_LIMIT ${LIMIT_MESSAGES.toolResult('t.echo', 150, 100)}\nok\nTOOL_RESULT_LIMIT ${LIMIT_MESSAGES.totalToolResults(60, 100)}\n`,
      );
    });
  });

  describe('the prelude alone (a host with no limits)', () => {
    it('tool calls: the calls past maxToolCalls never cross', async () => {
      const { printed, crossed } = await inSandbox(countCalls, { maxToolCalls: 3 });
      expect(crossed).toBe(3);
      expect(printed[0]).toBe(`3 TOOL_CALL_LIMIT ${LIMIT_MESSAGES.toolCalls(3)}\n`);
    });

    it('tool name length', async () => {
      const name = `t.${'x'.repeat(40)}`;
      const { printed, crossed } = await inSandbox(
        `try { await callTool(${JSON.stringify(name)}, {}); } catch (e: any) { console.log(e.code, e.message); }`,
        { maxToolNameChars: 20 },
      );
      expect(crossed).toBe(0);
      expect(printed[0]).toBe(`UNKNOWN_TOOL ${LIMIT_MESSAGES.toolName(name, 20)}\n`);
    });

    it('bytes of one call’s arguments', async () => {
      const { printed, crossed } = await inSandbox(
        `try { await tools.t.echo({ blob: 'x'.repeat(200) }); } catch (e: any) { console.log(e.code, e.message); }`,
        { maxToolArgsBytes: 100 },
      );
      expect(crossed).toBe(0);
      expect(printed[0]).toBe(`TOOL_ARGS_LIMIT ${LIMIT_MESSAGES.toolArgs('t.echo', 211, 100)}\n`);
    });

    it('bytes of arguments waiting for an answer', async () => {
      const { printed, crossed } = await inSandbox(
        `const settled = await Promise.allSettled([1, 2].map(() => tools.t.echo({ blob: 'x'.repeat(200) })));
         for (const s of settled) console.log(s.status === 'fulfilled' ? 'ok' : (s.reason as any).code + ' ' + (s.reason as any).message);`,
        { maxPendingToolArgsBytes: 500 },
      );
      expect(crossed).toBe(1);
      expect(printed[0]).toBe(`ok\nTOOL_ARGS_LIMIT ${LIMIT_MESSAGES.pendingToolArgs(281, 281, 500)}\n`);
    });

    it('stdout and stderr bytes: no more than the budget crosses', async () => {
      const { printed } = await inSandbox(
        `for (let i = 0; i < 20; i++) { console.log('o'.repeat(20)); console.error('e'.repeat(20)); }`,
        { maxStdoutBytes: 50, maxStderrBytes: 30 },
      );
      expect(printed[0]!.length).toBeLessThanOrEqual(50);
      expect(printed[1]!.length).toBeLessThanOrEqual(30);
    });

    it('bytes of the return value: never copied out', async () => {
      const { printed, returnJson } = await inSandbox(`return { blob: 'x'.repeat(100) };`, {
        maxStdoutBytes: 50,
      });
      expect(returnJson).toBeUndefined();
      expect(printed[1]).toBe(LIMIT_MESSAGES.returnValue(50));
    });
  });
});
