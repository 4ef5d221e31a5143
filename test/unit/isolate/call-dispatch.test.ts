/**
 * @module
 * The host never runs a tool's invoker while the script is entered: a call reaches the host
 * inside the isolate's callback, and its invoker starts once that entry has returned (the calls
 * of one entry start together). A real engine with the real prelude and a real RunController;
 * the sink between them only records the order in which things reach the host.
 */
import { afterAll, describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { loadPreludeSource } from '../../../src/isolate/assets.js';
import { IsolateEngine } from '../../../src/isolate/engine.js';
import { resolveSandboxLimits } from '../../../src/isolate/limits.js';
import { RunController } from '../../../src/isolate/run-controller.js';
import { SandboxToolCatalog } from '../../../src/isolate/tool-catalog.js';
import type { SandboxToolBinding } from '../../../src/types.js';

const tools: SandboxToolBinding[] = [{ name: 't.echo', namespace: 't', member: 'echo' }];

describe('starting tool calls', () => {
  const engine = new IsolateEngine({ prelude: loadPreludeSource(), spareMemoryMb: 256 });
  afterAll(() => engine.close());

  it('runs an invoker only after the entry that made the call has returned', async () => {
    const events: string[] = [];
    const compiled = compileScript(
      `const first = tools.t.echo({ n: 1 });
       const second = tools.t.echo({ n: 2 });
       console.log('entry goes on');
       const answers = await Promise.all([first, second]);
       console.log(answers.map((answer) => answer.n).join(','));
       const third = tools.t.echo({ n: 3 });
       console.log('second entry goes on');
       return (await third).n;`,
    );
    if (!compiled.ok) throw new Error(compiled.error.message);
    const limits = resolveSandboxLimits({});
    const controller = new RunController({
      code: compiled.code,
      tools,
      limits,
      invoke: async ({ args }) => {
        events.push(`invoke ${(args as { n: number }).n}`);
        return args;
      },
    });
    const result = await controller.run((sink) =>
      engine.start(
        {
          code: compiled.code,
          tools: SandboxToolCatalog.of(tools).engine,
          limits,
          wallTimeLeftMs: controller.wallTimeLeftMs(),
        },
        {
          output(stream, text, dropped) {
            events.push(`print ${text.trim()}`);
            sink.output(stream, text, dropped);
          },
          call(id, name, args, site) {
            events.push(`call ${JSON.parse(args).n}`);
            sink.call(id, name, args, site);
          },
        },
      ),
    );
    expect(result.status).toBe('ok');
    expect(result.returnValue).toBe(3);
    expect(result.toolCalls.map((call) => call.ok)).toEqual([true, true, true]);
    expect(events).toEqual([
      'call 1',
      'call 2',
      'print entry goes on',
      'invoke 1',
      'invoke 2',
      'print 1,2',
      'call 3',
      'print second entry goes on',
      'invoke 3',
    ]);
  });
});
