import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { isCodecallError, type CodecallError } from '../../../src/errors.js';
import {
  awaitApproval,
  needsApproval,
  resolveRequireApproval,
  type ApprovalRecord,
  type ApprovalTarget,
} from '../../../src/tools/index.js';

const target: ApprovalTarget = {
  name: 'files.remove',
  server: 'files',
  tool: 'remove',
  requireApproval: true,
  requireApprovalSource: 'tool',
};

async function failure(work: Promise<unknown>): Promise<CodecallError> {
  const error = await work.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!isCodecallError(error)) throw new Error(`expected a codecall error, got ${String(error)}`);
  return error;
}

describe('resolveRequireApproval', () => {
  const destructive = { destructiveHint: true };
  it('tool, then server, then the destructive default for every destructive tool, else false', () => {
    expect(resolveRequireApproval({ tool: false, server: true })).toEqual({
      requireApproval: false,
      source: 'tool',
    });
    expect(resolveRequireApproval({ server: true }).source).toBe('server');
    // Whoever may call it: a direct-only destructive tool waits for approval too.
    expect(resolveRequireApproval({ annotations: destructive })).toEqual({
      requireApproval: true,
      source: 'annotations',
    });
    // approvals.requireForDestructive: false turns the default off.
    expect(resolveRequireApproval({ annotations: destructive, requireForDestructive: false })).toEqual({
      requireApproval: false,
      source: 'default',
    });
    // Read-only besides: no default approval.
    expect(
      resolveRequireApproval({ annotations: { destructiveHint: true, readOnlyHint: true } }).requireApproval,
    ).toBe(false);
  });
});

describe('needsApproval', () => {
  it('a rule matches the value at its JSON pointer (escapes, arrays, deep values), own properties only', () => {
    const rule = (pointer: string, values: unknown[]) => ({ requireApproval: { pointer, values } });
    expect(needsApproval(rule('/mode', ['force']), { mode: 'force' })).toBe(true);
    expect(needsApproval(rule('/mode', ['force']), { mode: 'safe' })).toBe(false);
    expect(needsApproval(rule('/mode', ['force']), {})).toBe(false);
    expect(needsApproval(rule('/a~1b/~0c', [1]), { 'a/b': { '~c': 1 } })).toBe(true);
    expect(needsApproval(rule('/paths/1', ['/etc']), { paths: ['/tmp', '/etc'] })).toBe(true);
    expect(needsApproval(rule('/paths/01', ['/etc']), { paths: ['/tmp', '/etc'] })).toBe(false);
    expect(needsApproval(rule('/target', [{ env: 'prod' }]), { target: { env: 'prod' } })).toBe(true);
    expect(needsApproval(rule('/target', [{ env: 'prod' }]), { target: { env: 'prod', x: 1 } })).toBe(false);
    // Inherited members are not arguments.
    expect(needsApproval(rule('/constructor', [Object]), {})).toBe(false);
    expect(needsApproval(rule('', [{}]), {})).toBe(true);
    expect(needsApproval({ requireApproval: true }, {})).toBe(true);
    expect(needsApproval({ requireApproval: false }, {})).toBe(false);
  });
});

describe('awaitApproval', () => {
  it('an approver that throws denies, recorded as the callback’s failure', async () => {
    const records: ApprovalRecord[] = [];
    const error = await failure(
      awaitApproval(target, {
        args: {},
        caller: 'direct',
        approver: () => {
          throw new Error('approval service down');
        },
        timeoutMs: 1_000,
        onDecision: (record) => records.push(record),
      }),
    );
    expect(error.code).toBe('APPROVAL_DENIED');
    expect(error.message).toContain('the approver failed: approval service down');
    expect(records.map((r) => [r.outcome, r.decidedBy])).toEqual([['denied', 'callback']]);
  });

  it('a run cancelled while the call waits rejects with ABORTED and withdraws the question', async () => {
    const controller = new AbortController();
    let withdrawn = false;
    const waiting = awaitApproval(target, {
      args: { path: '/' },
      caller: 'code_execution',
      approver: (request) =>
        new Promise<boolean>(() => {
          request.signal.addEventListener('abort', () => (withdrawn = true));
          controller.abort();
        }),
      timeoutMs: 60_000,
      signal: controller.signal,
    });
    const error = await failure(waiting);
    expect(error.code).toBe('ABORTED');
    expect(withdrawn).toBe(true);
  });

  it('a listener that throws never fails the decision', async () => {
    await expect(
      awaitApproval(target, {
        args: {},
        caller: 'direct',
        approver: () => true,
        timeoutMs: 1_000,
        onDecision: () => {
          throw new Error('audit down');
        },
      }),
    ).resolves.toBeUndefined();
  });
});

describe('requireApproval in the configuration', () => {
  const file = '/project/codecall.json';
  it('resolves booleans and rules per server and tool, and approvals.timeoutMs', () => {
    const config = parseConfig(
      {
        mcpServers: {
          s: {
            command: 'x',
            requireApproval: true,
            tools: { t: { requireApproval: { pointer: '/mode', values: ['force'] } } },
          },
        },
        approvals: { timeoutMs: 5_000, requireForDestructive: false },
      },
      { file, env: {} },
    );
    expect(config.mcpServers.s!.requireApproval).toBe(true);
    expect(config.mcpServers.s!.tools.t!.requireApproval).toEqual({ pointer: '/mode', values: ['force'] });
    expect(config.approvals).toEqual({ timeoutMs: 5_000, requireForDestructive: false });
  });

  it('refuses a bad rule with an issue naming the field and the fix', () => {
    const issuesOf = (requireApproval: unknown): Record<string, string> => {
      try {
        parseConfig(
          { mcpServers: { s: { command: 'x', tools: { t: { requireApproval } } } } },
          { file, env: {} },
        );
      } catch (error) {
        return Object.fromEntries(
          ((error as CodecallError<'CONFIG_INVALID'>).details.issues ?? []).map((i) => [i.path, i.message]),
        );
      }
      return {};
    };
    expect(
      issuesOf({ pointer: 'mode', values: ['x'] })['mcpServers.s.tools.t.requireApproval.pointer'],
    ).toContain('must be a JSON pointer');
    expect(
      issuesOf({ pointer: '/mode', values: [] })['mcpServers.s.tools.t.requireApproval.values'],
    ).toBeDefined();
    expect(issuesOf('yes')['mcpServers.s.tools.t.requireApproval']).toContain(
      'must be true, false, or a rule { "pointer": "/field", "values": [ … ] }',
    );
  });
});
