/**
 * @module
 * One `execute_code` run of a 2026-07-28 client answered in its request (not as a task): the run
 * is journaled, and it pauses, answering `input_required` with a signed `requestState`, when one
 * of its calls needs approval (`modern-approvals.ts`) or is asked something by its upstream server
 * (`modern-input.ts`). A retry with the client's `inputResponses` may reach any node: it replays
 * the run's journal up to the paused call and goes on from there.
 */
import { randomUUID } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  type CallToolResult,
  type InputRequiredResult,
  type RequestStateCodec,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { formatResultForModel, type CodecallRuntime } from '../execute/index.js';
import { hashCode } from '../store/index.js';
import type { JobStateStore } from '../store/job-state.js';
import type { CallTrace } from '../util/trace-context.js';
import type { ExecuteCodeEvent } from './create-codecall-server.js';
import { approvalRound, createRoundApprover, decisionOf, type PausedCall } from './modern-approvals.js';
import {
  answerLogKey,
  createInputRound,
  inputRound,
  RunAnswers,
  type ClientCapabilities,
} from './modern-input.js';
import type { RunLimiter } from './run-limiter.js';
import { errorText, textResult as sharedTextResult } from './shared-handlers.js';

/** What {@link executeModern} needs of the leg that serves it. */
export interface ModernExecuteOptions {
  runtime: CodecallRuntime;
  limiter: RunLimiter;
  learn: boolean;
  codec: RequestStateCodec<PausedCall>;
  journals: JobStateStore;
  /** The revision served, in owner and journal keys. */
  protocol: string;
  onError?: ((error: unknown) => void) | undefined;
  onExecute?: ((event: ExecuteCodeEvent) => void) | undefined;
  /** `result` with the note on MCP servers not connected (if any). */
  withServerNote: (result: CallToolResult) => CallToolResult;
}

function textResult(text: string, isError = false): CallToolResult {
  return sharedTextResult(text, isError) as CallToolResult;
}

/** Runs `code` for one 2026-07-28 `tools/call` (or resumes the run its `requestState` names). */
export async function executeModern(
  options: ModernExecuteOptions,
  code: string,
  ctx: ServerContext,
  trace: CallTrace | undefined,
): Promise<CallToolResult | InputRequiredResult> {
  const { runtime, limiter } = options;
  const signal = ctx.mcpReq.signal;
  try {
    const release = await limiter.acquire(signal);
    if (release === 'busy')
      return textResult(
        `codecall is busy: ${limiter.running} runs in flight and ${limiter.queued} waiting (the most this ` +
          'server accepts). Nothing ran; try again shortly.',
        true,
      );
    if (release === 'aborted') return textResult('Cancelled before the script started; nothing ran.', true);
    try {
      const owner = `mcp-${options.protocol}:${randomUUID()}`;
      const codeHash = hashCode(code);
      // A retry after an approval or input round: its state was verified (signature, age, size) by the SDK.
      const decided = ctx.mcpReq.requestState<PausedCall>();
      if (decided !== undefined && decided.code !== codeHash)
        return textResult(
          'This retry carries the state of another script; nothing ran. Retry with the same code, or call execute_code again without it.',
          true,
        );
      const runKey = decided?.run ?? randomUUID();
      const journalKey = `mcp-${options.protocol}:${runKey}`;
      const journal = options.journals.journal(journalKey);
      if (decided !== undefined && (await journal.entries()).length === 0)
        return textResult(
          'The run this answer belongs to is not known here (its journal is gone: it expired, or it was ' +
            'kept by another codecall node without a shared store). Nothing ran; call execute_code again.',
          true,
        );
      const answers = await RunAnswers.open(options.journals.journal(answerLogKey(journalKey)));
      const controller = new AbortController();
      const onAbort = (): void => controller.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      /** Which pause stopped the run first (an approval and an input request may race). */
      let pausedBy: 'approval' | 'input' | undefined;
      const stop = (kind: 'approval' | 'input') => (): void => {
        pausedBy ??= kind;
        controller.abort(new Error(`paused for ${kind === 'approval' ? 'an approval' : 'an input request'}`));
      };
      const round = createRoundApprover({
        journal,
        decided,
        decision:
          decided !== undefined && decided.input === undefined
            ? decisionOf(ctx.mcpReq.inputResponses)
            : undefined,
        decisions: answers,
        stop: stop('approval'),
      });
      // The client's capabilities come with each 2026 request (the _meta envelope the SDK lifts out).
      const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
      const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities;
      const elicits = capabilities?.elicitation !== undefined;
      const input = createInputRound({
        callOf: round.callOf,
        answers,
        decided,
        responses: ctx.mcpReq.inputResponses,
        capabilities,
        stop: stop('input'),
      });
      // What the upstreams send during this run's calls is this request's (never another client's).
      const forget = runtime.tools.attributeRun(runKey, owner);
      let result;
      try {
        result = await runtime.execute(code, {
          signal: controller.signal,
          learn: options.learn,
          runId: runKey,
          owner,
          journal: round.journal,
          asker: input.asker,
          ...(trace !== undefined ? { trace } : {}),
          ...(decided !== undefined ? { replay: true, replayInDoubt: 'repeat' as const } : {}),
          approver:
            runtime.tools.approver ??
            (elicits
              ? round.approver
              : () => ({
                  approved: false,
                  decidedBy: 'policy' as const,
                  reason:
                    'the MCP client did not declare the elicitation capability, so codecall cannot ask for approval',
                })),
        });
      } finally {
        forget();
        signal.removeEventListener('abort', onAbort);
      }
      const inputRounds = decided?.inputRounds ?? 0;
      const paused = round.paused();
      if (pausedBy === 'approval' && paused !== undefined && !signal.aborted)
        return await approvalRound(
          options.codec,
          {
            run: runKey,
            code: codeHash,
            call: paused.call,
            tool: paused.request.tool,
            args: paused.args,
            ...(inputRounds > 0 ? { inputRounds } : {}),
          },
          paused.request,
          ctx,
        );
      const asked = input.paused();
      if (pausedBy === 'input' && asked !== undefined && !signal.aborted)
        return await inputRound(options.codec, { run: runKey, code: codeHash, inputRounds }, asked, ctx);
      await options.journals.forget(journalKey);
      await options.journals.forget(answerLogKey(journalKey));
      try {
        options.onExecute?.({ result });
      } catch {
        // A listener's failure must not fail the run.
      }
      return options.withServerNote(textResult(formatResultForModel(result), result.status === 'error'));
    } finally {
      release();
    }
  } catch (error) {
    return textResult(errorText(error, options.onError), true);
  }
}
