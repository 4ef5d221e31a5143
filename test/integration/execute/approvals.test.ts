import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { isCodecallError } from '../../../src/errors.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import {
  createMisbehavingServer,
  inMemoryTransport,
  type MisbehavingServerProbe,
} from '../../../src/testing/servers/index.js';
import type { ApprovalRecord, ApprovalRequest, Approver } from '../../../src/tools/index.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const opened: CodecallRuntime[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((runtime) => runtime.close()));
});

interface Opened {
  runtime: CodecallRuntime;
  probe: MisbehavingServerProbe;
  decisions: ApprovalRecord[];
}

/** A runtime over the misbehaving server, whose destructive `destroy` is opened to code. */
async function open(
  options: {
    onApproval?: Approver;
    approvals?: object;
    history?: SqliteHistoryStore;
    tools?: object;
    sandboxMode?: 'in-process' | 'process';
  } = {},
): Promise<Opened> {
  let probe!: MisbehavingServerProbe;
  const decisions: ApprovalRecord[] = [];
  const config = parseConfig(
    {
      mcpServers: {
        misc: {
          command: 'unused-in-memory',
          tools: {
            destroy: { allowedCallers: ['direct', 'code_execution'] },
            ...options.tools,
          },
        },
      },
      history: { enabled: false },
      ...(options.sandboxMode ? { sandbox: { mode: options.sandboxMode } } : {}),
      ...(options.approvals ? { approvals: options.approvals } : {}),
    },
    { file: '<approvals.test>' },
  );
  const runtime = await CodecallRuntime.open({
    config,
    history: options.history ?? false,
    ...(options.onApproval ? { onApproval: options.onApproval } : {}),
    tools: {
      transports: {
        misc: inMemoryTransport(() => {
          const made = createMisbehavingServer({ name: 'misc' });
          probe = made.probe;
          return made.server;
        }),
      },
      onApprovalDecision: (record) => decisions.push(record),
    },
  });
  opened.push(runtime);
  return { runtime, probe, decisions };
}

/** An approver the test answers by hand, with the requests it was asked. */
function manualApprover(): {
  approver: Approver;
  asked: ApprovalRequest[];
  next: () => Promise<{ request: ApprovalRequest; answer: (approved: boolean) => void }>;
} {
  const asked: ApprovalRequest[] = [];
  const waiting: Array<(entry: { request: ApprovalRequest; answer: (approved: boolean) => void }) => void> =
    [];
  const queued: Array<{ request: ApprovalRequest; answer: (approved: boolean) => void }> = [];
  const approver: Approver = (request) =>
    new Promise<boolean>((resolve) => {
      asked.push(request);
      const entry = { request, answer: resolve };
      const waiter = waiting.shift();
      if (waiter) waiter(entry);
      else queued.push(entry);
    });
  const next = () =>
    new Promise<{ request: ApprovalRequest; answer: (approved: boolean) => void }>((resolve) => {
      const entry = queued.shift();
      if (entry) resolve(entry);
      else waiting.push(resolve);
    });
  return { approver, asked, next };
}

describe('approvals of tool calls', () => {
  it('pauses a script on a destructive call while its other calls go on; approved, the call runs once', async () => {
    const manual = manualApprover();
    const { runtime, probe, decisions } = await open({ onApproval: manual.approver });
    expect(runtime.tools.get('misc.destroy')?.requireApproval).toBe(true);
    const running = runtime.execute(`
      const destroyed = tools.misc.destroy({});
      const slow = await tools.misc.slow({ ms: 1, label: 'beside' });
      console.log('beside done', slow.label);
      console.log('destroy:', await destroyed);
    `);
    const { request, answer } = await manual.next();
    expect(request).toMatchObject({
      tool: 'misc.destroy',
      server: 'misc',
      args: {},
      caller: 'code_execution',
    });
    expect(request.reason).toMatch(/destructiveHint/);
    expect(typeof request.runId).toBe('string');
    expect(request.callIndex).toBe(0);
    // The other call of the script ran to the end while this one waited.
    await expect.poll(() => probe.completed).toContain('beside');
    expect(probe.destroyed).toBe(0);
    answer(true);
    const result = await running;
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    expect(result.stdout).toBe('beside done beside\ndestroy: destroyed\n');
    expect(probe.destroyed).toBe(1);
    expect(manual.asked).toHaveLength(1);
    expect(decisions).toEqual([
      expect.objectContaining({
        tool: 'misc.destroy',
        outcome: 'approved',
        decidedBy: 'callback',
        runId: request.runId,
        callIndex: 0,
        argsSha256: '44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a',
      }),
    ]);
  });

  it('a deny rejects the stub with APPROVAL_DENIED, which the script catches; the call never runs', async () => {
    const { runtime, probe, decisions } = await open({
      onApproval: () => ({ approved: false, reason: 'not today' }),
    });
    const result = await runtime.execute(`
      try { await tools.misc.destroy({}); console.log('ran'); }
      catch (error) { console.log(error.name, error.code, error.message); }
    `);
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    expect(result.stdout).toMatch(
      /^ToolError APPROVAL_DENIED Tool misc\.destroy was not approved \(not today\)/,
    );
    expect(probe.destroyed).toBe(0);
    expect(decisions.map((d) => [d.outcome, d.decidedBy, d.reason])).toEqual([
      ['denied', 'callback', 'not today'],
    ]);
  });

  it('no answer within approvals.timeoutMs rejects with APPROVAL_TIMEOUT and withdraws the question', async () => {
    let withdrawn = false;
    const { runtime, probe, decisions } = await open({
      approvals: { timeoutMs: 50 },
      onApproval: (request) =>
        new Promise<boolean>(() => {
          request.signal.addEventListener('abort', () => (withdrawn = true));
        }),
    });
    const result = await runtime.execute(`
      try { await tools.misc.destroy({}); } catch (error) { console.log(error.code, error.message); }
    `);
    expect(result.stdout).toMatch(/^APPROVAL_TIMEOUT Tool misc\.destroy was not approved within 50 ms/);
    expect(withdrawn).toBe(true);
    expect(probe.destroyed).toBe(0);
    expect(decisions.map((d) => [d.outcome, d.decidedBy])).toEqual([['timeout', 'timeout']]);
  });

  it('gates direct calls too; with no approver the call is denied with the key that would allow it', async () => {
    const { runtime, probe } = await open();
    const error: unknown = await runtime.callTool('misc.destroy', {}).catch((failure: unknown) => failure);
    expect(isCodecallError(error) && error.code).toBe('APPROVAL_DENIED');
    expect((error as Error).message).toMatch(/nobody can approve calls here/);
    expect((error as Error).message).toContain('mcpServers.misc.tools.destroy.requireApproval');
    expect(probe.destroyed).toBe(0);
    const approved = await runtime.callTool('misc.destroy', {}, { approver: () => true });
    expect(approved).toBe('destroyed');
    expect(probe.destroyed).toBe(1);
  });

  it('a rule asks only for the arguments it names; requireApproval false turns the destructive default off', async () => {
    const asked: string[] = [];
    const { runtime, probe } = await open({
      onApproval: (request) => {
        asked.push(JSON.stringify(request.args));
        return false;
      },
      tools: {
        echo: { requireApproval: { pointer: '/mode', values: ['loud'] } },
        destroy: { allowedCallers: ['direct', 'code_execution'], requireApproval: false },
      },
    });
    const result = await runtime.execute(`
      console.log((await tools.misc.echo({ text: 'a', mode: 'plain' })).text);
      try { await tools.misc.echo({ text: 'b', mode: 'loud' }); } catch (error) { console.log(error.code); }
      console.log(await tools.misc.destroy({}));
    `);
    expect(result.stdout).toBe('a\nAPPROVAL_DENIED\ndestroyed\n');
    expect(asked).toEqual(['{"text":"b","mode":"loud"}']);
    expect(probe.destroyed).toBe(1);
  });

  it('approvals.requireForDestructive: false turns the destructive default off for the whole configuration', async () => {
    const { runtime, probe } = await open({ approvals: { requireForDestructive: false } });
    expect(runtime.tools.get('misc.destroy')).toMatchObject({
      requireApproval: false,
      requireApprovalSource: 'default',
    });
    const result = await runtime.execute('console.log(await tools.misc.destroy({}));');
    expect(result.stdout).toBe('destroyed\n');
    expect(probe.destroyed).toBe(1);
  });

  it('records every decision in the SQLite history store, newest first', async () => {
    const path = join(dir, 'audit.sqlite');
    const history = await SqliteHistoryStore.open({ path });
    const { runtime } = await open({ history, onApproval: (request) => request.callIndex === 0 });
    const result = await runtime.execute(`
      await tools.misc.destroy({});
      try { await tools.misc.destroy({}); } catch (error) { console.log(error.code); }
    `);
    expect(result.stdout).toBe('APPROVAL_DENIED\n');
    await runtime.close();
    const reopened = await SqliteHistoryStore.open({ path });
    try {
      const rows = await reopened.listApprovals();
      expect(rows.map((row) => [row.tool, row.outcome, row.decidedBy, row.callIndex])).toEqual([
        ['misc.destroy', 'denied', 'callback', 1],
        ['misc.destroy', 'approved', 'callback', 0],
      ]);
      expect(rows[0]!.runId).toBe(rows[1]!.runId);
      expect(rows[0]!.argsSha256).toMatch(/^[0-9a-f]{64}$/);
    } finally {
      await reopened.close();
    }
  });

  describe.each(['in-process', 'process'] as const)(
    'the script line of a call (%s sandbox)',
    (sandboxMode) => {
      it('names the model line that made the call in the request and the audit record, through helpers and TypeScript', async () => {
        const path = join(dir, `line-${sandboxMode}.sqlite`);
        const history = await SqliteHistoryStore.open({ path });
        const lines: Array<number | undefined> = [];
        const { runtime } = await open({
          history,
          sandboxMode,
          onApproval: (request) => {
            lines.push(request.line);
            return true;
          },
        });
        const result = await runtime.execute(
          [
            '// the first line',
            'const label: string = "before";',
            'async function wipe(): Promise<unknown> {',
            '  return await tools.misc.destroy({});',
            '}',
            'await tools.misc.slow({ ms: 1, label });',
            'await wipe();',
            '',
            'console.log(await callTool("misc.destroy", {}));',
          ].join('\n'),
        );
        expect(result.error).toBeUndefined();
        expect(result.stdout).toBe('destroyed\n');
        expect(lines).toEqual([4, 9]);
        await runtime.close();
        const reopened = await SqliteHistoryStore.open({ path });
        try {
          expect((await reopened.listApprovals()).map((row) => row.line)).toEqual([9, 4]);
        } finally {
          await reopened.close();
        }
      });

      it("a script's own prepareStackTrace and stackTraceLimit cannot fake or hide the line; a frozen Error only hides it", async () => {
        const lines: Array<number | undefined> = [];
        const { runtime } = await open({
          sandboxMode,
          onApproval: (request) => {
            lines.push(request.line);
            return true;
          },
        });
        const faked = await runtime.execute(
          [
            'Error.prepareStackTrace = () => [];',
            'Error.stackTraceLimit = 0;',
            'await tools.misc.destroy({});',
            'console.log(Error.stackTraceLimit, typeof Error.prepareStackTrace);',
          ].join('\n'),
        );
        expect(faked.stdout).toBe('0 function\n');
        const frozen = await runtime.execute(
          'Object.freeze(Error);\nconsole.log(await tools.misc.destroy({}));',
        );
        expect(frozen.stdout).toBe('destroyed\n');
        expect(lines).toEqual([3, undefined]);
      });
    },
  );
});
