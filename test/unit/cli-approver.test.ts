/**
 * The approver of `codecall run` / `exec` at a terminal: a y/N question on stderr per call, one
 * at a time, answered from stdin (streams flagged as TTYs, read by the real readline).
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createCliApprover } from '../../src/cli/cli-approver.js';
import type { CliIo } from '../../src/cli/command.js';
import type { ApprovalDecision, ApprovalRequest } from '../../src/tools/index.js';

function terminal(): { io: CliIo; stdin: PassThrough; asked: () => string } {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  const stderr = Object.assign(new PassThrough(), { isTTY: true });
  let written = '';
  stderr.on('data', (chunk: Buffer) => (written += chunk.toString()));
  const io: CliIo = {
    stdin,
    stdout: new PassThrough(),
    stderr,
    cwd: process.cwd(),
    env: {},
    signal: new AbortController().signal,
  };
  return { io, stdin, asked: () => written };
}

function request(
  tool: string,
  args: unknown,
  signal = new AbortController().signal,
  line?: number,
): ApprovalRequest {
  return {
    tool,
    server: tool.split('.')[0]!,
    args,
    caller: 'code_execution',
    reason: 'the server marks it destructive (destructiveHint) and code may call it',
    callIndex: 0,
    ...(line !== undefined ? { line } : {}),
    signal,
  };
}

/** Resolves once `text` has been written to the terminal. */
async function until(read: () => string, text: string): Promise<void> {
  await expect.poll(read).toContain(text);
}

describe('createCliApprover at a terminal', () => {
  it('asks one call at a time on stderr; y approves, anything else denies', async () => {
    const { io, stdin, asked } = terminal();
    const approver = createCliApprover({ io, command: 'exec', approve: [] });
    const first = Promise.resolve(approver(request('files.remove', { path: '/tmp/a' })));
    const second = Promise.resolve(
      approver(request('files.remove', { path: '/etc\u001b[2J' }, new AbortController().signal, 7)),
    );
    await until(asked, 'approve files.remove({"path":"/tmp/a"}) from code (call #1 of the script)?');
    expect(asked()).toMatch(/\[y\/N\] $/);
    // The second question waits for the first answer.
    expect(asked()).not.toContain('/etc');
    stdin.write('y\n');
    expect(await first).toEqual({ approved: true, decidedBy: 'tty' });
    await until(asked, '/etc');
    // The script line of the call, when the request carries it.
    await until(asked, 'from code (call #1 of the script, line 7)?');
    // A control sequence in the arguments is shown, never sent to the terminal.
    expect(asked()).not.toContain('\u001b');
    stdin.write('nope\n');
    expect(await second).toMatchObject({
      approved: false,
      decidedBy: 'tty',
      reason: 'denied at the terminal',
    });
  });

  it('--approve answers without asking; a withdrawn question is closed', async () => {
    const { io, asked } = terminal();
    const approver = createCliApprover({ io, command: 'run', approve: ['files.remove'] });
    expect(await approver(request('files.remove', {}))).toMatchObject({ approved: true, decidedBy: 'flag' });
    expect(asked()).toBe('');
    const controller = new AbortController();
    const waiting = Promise.resolve(approver(request('files.move', {}, controller.signal)));
    await until(asked, 'approve files.move({})');
    controller.abort();
    expect((await waiting) as ApprovalDecision).toMatchObject({ approved: false, reason: 'withdrawn' });
  });
});
