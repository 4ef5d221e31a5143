/**
 * @module
 * Where `codecall run` and `codecall exec` get approvals from (`requireApproval`): the
 * `--approve <tool|all>` flags first, then a y/N prompt on stderr when stdin and stderr are a
 * terminal (one question at a time), otherwise a deny whose reason names the flag and the
 * configuration key that would allow the call.
 */
import { createInterface } from 'node:readline';
import type { Approver, ApprovalDecision, ApprovalRequest } from '../tools/index.js';
// From its module, not the tools index: `codecall exec` loads this before the MCP client.
import { approvalConfigKey } from '../tools/approval.js';
import { escapeInvisible, renderApprovalCall } from '../tools/approval-text.js';
import { UsageError, type CliIo } from './command.js';
import { neutralizeControls } from './terminal-text.js';
import { canPrompt } from './trust.js';

/** Checks the values of `--approve`: `all` or qualified tool names (`server.tool`). */
export function checkApproveFlag(value: string): string {
  if (value !== 'all' && !/^[^.\s]+\..+$/.test(value))
    throw new UsageError(`--approve takes a tool as server.tool, or all; got "${value}".`);
  return value;
}

/** Options of {@link createCliApprover}. */
export interface CliApproverOptions {
  io: CliIo;
  /** The command, for the prompt and messages (`exec`, `run`). */
  command: string;
  /** Values of `--approve`: tools approved without asking, or `all`. */
  approve: readonly string[];
}

function describeCall(request: ApprovalRequest): string {
  const where =
    request.caller === 'code_execution'
      ? ` from code${request.callIndex !== undefined ? ` (call #${request.callIndex + 1} of the script${request.line !== undefined ? `, line ${request.line}` : ''})` : request.line !== undefined ? ` (line ${request.line})` : ''}`
      : '';
  return neutralizeControls(`${renderApprovalCall(request)}${where}`);
}

/** The approver of a CLI command; see the module comment. */
export function createCliApprover(options: CliApproverOptions): Approver {
  const { io, command } = options;
  const all = options.approve.includes('all');
  const listed = new Set(options.approve);
  let queue: Promise<unknown> = Promise.resolve();
  const ask = (request: ApprovalRequest): Promise<ApprovalDecision> =>
    new Promise<ApprovalDecision>((resolve) => {
      if (request.signal.aborted) {
        resolve({ approved: false, decidedBy: 'tty', reason: 'withdrawn' });
        return;
      }
      const lines = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
      let answered = false;
      const finish = (decision: ApprovalDecision): void => {
        if (answered) return;
        answered = true;
        request.signal.removeEventListener('abort', onAbort);
        lines.close();
        resolve(decision);
      };
      const onAbort = (): void => {
        io.stderr.write('\n');
        finish({ approved: false, decidedBy: 'tty', reason: 'withdrawn' });
      };
      request.signal.addEventListener('abort', onAbort, { once: true });
      lines.once('line', (line) => {
        const yes = /^\s*y(es)?\s*$/i.test(line);
        finish(
          yes
            ? { approved: true, decidedBy: 'tty' }
            : { approved: false, decidedBy: 'tty', reason: 'denied at the terminal' },
        );
      });
      lines.once('close', () =>
        finish({ approved: false, decidedBy: 'tty', reason: 'no answer (input closed)' }),
      );
      io.stderr.write(
        `codecall ${command}: approve ${describeCall(request)}? It needs approval because ${neutralizeControls(escapeInvisible(request.reason))}. [y/N] `,
      );
    });
  return (request) => {
    if (all || listed.has(request.tool)) return { approved: true, decidedBy: 'flag', reason: '--approve' };
    if (!canPrompt(io)) {
      const key = approvalConfigKey({
        server: request.server,
        tool: request.tool.slice(request.server.length + 1),
      });
      return {
        approved: false,
        decidedBy: 'policy',
        reason: `no terminal to ask (stdin is not a TTY); allow it with codecall ${command} --approve ${request.tool} (or --approve all), or set ${key} to false`,
      };
    }
    // One question at a time: calls in flight together wait their turn at the terminal.
    const turn = queue.then(() => ask(request));
    queue = turn.catch(() => undefined);
    return turn;
  };
}
