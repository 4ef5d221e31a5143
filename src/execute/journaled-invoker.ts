/**
 * @module
 * Wraps a run's tool invoker with its {@link RunJournal}: each call is journaled `started` before
 * it reaches its server and `finished` before its answer reaches the script. When the run
 * resumes an earlier one (replay), calls the journal already has are answered from it without
 * asking the server.
 *
 * Calls are matched by (qualified name, arguments hash, occurrence): the n-th call of a tool with
 * given arguments in the replay is the n-th such call in the journal. Matching does not depend on
 * the order concurrent calls were dispatched in, only on the script making the same calls. A call
 * with no match while journaled calls are still unanswered means the script took another path:
 * the run stops with `REPLAY_DIVERGED`. A journaled call that was in flight when the earlier run
 * died (`started`, never `finished`) may or may not have happened: it is called again only when
 * its tool is annotated `idempotentHint` or `readOnlyHint` (or the caller said `repeat`);
 * otherwise the run stops with `REPLAY_IN_DOUBT`.
 */
import { CodecallError } from '../errors.js';
import { JsonText } from '../util/json-text.js';
import type { ToolInvoker } from '../types.js';
import {
  hashArgs,
  type RunJournal,
  type RunJournalEntry,
  type RunJournalFinished,
  type RunJournalStarted,
} from '../store/index.js';

/** What a replay does with a call that was in flight when the earlier run stopped. */
export type ReplayInDoubtPolicy = 'refuse' | 'repeat';

/** Options of {@link createJournaledInvoker}. */
export interface JournaledInvokerOptions {
  /** The live invoker (the MCP pool). */
  invoke: ToolInvoker;
  journal: RunJournal;
  /** Entries of the run being resumed (empty for a fresh run). */
  recorded: readonly RunJournalEntry[];
  /** True when calling this tool twice is harmless (its annotations say idempotent or read-only). */
  isRepeatable: (name: string) => boolean;
  inDoubt: ReplayInDoubtPolicy;
  /** Stops the run; the executor throws `error` once the sandbox has ended. */
  stop: (error: CodecallError) => void;
}

/** A journaled invoker and the check made when its run has ended. */
export interface JournaledInvoker {
  invoke: ToolInvoker;
  /** Journaled calls the replay never made (qualified names, in journal order). */
  unmatched(): string[];
}

interface RecordedCall {
  index: number;
  started?: RunJournalStarted;
  finished?: RunJournalFinished;
  used: boolean;
}

function keyOf(name: string, argsHash: string): string {
  return `${name}\0${argsHash}`;
}

/** Builds the invoker of one run over its journal. */
export function createJournaledInvoker(options: JournaledInvokerOptions): JournaledInvoker {
  const { journal, stop } = options;
  const byIndex = new Map<number, RecordedCall>();
  for (const entry of options.recorded) {
    if (entry.type === 'run') continue;
    let call = byIndex.get(entry.index);
    if (!call) byIndex.set(entry.index, (call = { index: entry.index, used: false }));
    if (entry.type === 'started') call.started ??= entry;
    else call.finished ??= entry;
  }
  const calls = [...byIndex.values()].sort((a, b) => a.index - b.index);
  /** Unused recorded calls by (name, args hash), in journal order. */
  const pending = new Map<string, RecordedCall[]>();
  for (const call of calls) {
    const entry = call.finished ?? call.started!;
    const key = keyOf(entry.name, entry.argsHash);
    const list = pending.get(key);
    if (list) list.push(call);
    else pending.set(key, [call]);
  }
  let unused = calls.length;
  let nextIndex = calls.length === 0 ? 0 : calls[calls.length - 1]!.index + 1;
  let stopped: CodecallError | undefined;
  const halt = (error: CodecallError): CodecallError => {
    if (!stopped) {
      stopped = error;
      stop(error);
    }
    return stopped;
  };

  const live = async (
    index: number,
    invocation: Parameters<ToolInvoker>[0],
    argsHash: string,
  ): Promise<unknown> => {
    const { name, args } = invocation;
    try {
      await journal.append({ type: 'started', index, name, argsHash, args, at: Date.now() });
    } catch (error) {
      throw halt(
        new CodecallError(
          'JOURNAL_WRITE_FAILED',
          `The run journal could not record the call to ${name} (${(error as Error)?.message ?? String(error)}); the run stopped before making it.`,
          { details: { tool: name }, cause: error },
        ),
      );
    }
    let finished: RunJournalFinished;
    let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
    try {
      let value = await options.invoke(invocation);
      // The journal keeps values, and a replay answers with them: the live run gets the same
      // value (not the text, which the sandbox could parse to what JSON cannot store, like -0).
      if (JsonText.isInstance(value)) value = value.value();
      outcome = { ok: true, value };
      try {
        JSON.stringify(value);
        finished = { type: 'finished', index, name, argsHash, ok: true, result: value, at: Date.now() };
      } catch (error) {
        const message = `The result of ${name} is not JSON data (${(error as Error)?.message ?? String(error)}).`;
        outcome = { ok: false, error: new Error(message) };
        finished = { type: 'finished', index, name, argsHash, ok: false, error: message, at: Date.now() };
      }
    } catch (error) {
      // A call cut short by the end of the run may have happened on the server: leave it in doubt.
      if (invocation.signal.aborted) throw error;
      outcome = { ok: false, error };
      const message = error instanceof Error ? error.message : String(error);
      finished = { type: 'finished', index, name, argsHash, ok: false, error: message, at: Date.now() };
    }
    try {
      await journal.append(finished);
    } catch (error) {
      throw halt(
        new CodecallError(
          'JOURNAL_WRITE_FAILED',
          `The run journal could not record the result of ${name} (${(error as Error)?.message ?? String(error)}); the call was made, and the run stopped.`,
          { details: { tool: name }, cause: error },
        ),
      );
    }
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  };

  const invoke: ToolInvoker = async (invocation) => {
    if (stopped) throw stopped;
    const { name, args } = invocation;
    const argsHash = hashArgs(args);
    const match = pending.get(keyOf(name, argsHash))?.find((call) => !call.used);
    if (match) {
      match.used = true;
      unused--;
      const done = match.finished;
      if (done) {
        if (done.ok) return done.result;
        throw new Error(done.error ?? 'the tool failed');
      }
      if (options.inDoubt !== 'repeat' && !options.isRepeatable(name)) {
        throw halt(
          new CodecallError(
            'REPLAY_IN_DOUBT',
            `The call to ${name} (journal index ${match.index}) was in flight when the earlier run stopped: it may or may not have happened, and ${name} is not annotated idempotent or read-only, so it is not repeated. Check its effect on the server; to call it again anyway, resume with inDoubt "repeat" (--repeat-in-doubt).`,
            { details: { tool: name, index: match.index } },
          ),
        );
      }
      return live(match.index, invocation, argsHash);
    }
    if (unused > 0) {
      const next = calls.find((call) => !call.used)!;
      const expected = (next.finished ?? next.started)!.name;
      throw halt(
        new CodecallError(
          'REPLAY_DIVERGED',
          `The replayed script called ${name} with arguments the journal has no call for, while the journal still has calls it has not made (next: ${expected}, journal index ${next.index}). The script or what it read changed since the journal was written; the run stopped so no call is made twice. Start a new run with a new journal.`,
          {
            details: {
              tool: name,
              index: nextIndex,
              unmatched: calls.filter((c) => !c.used).map((c) => (c.finished ?? c.started)!.name),
            },
          },
        ),
      );
    }
    return live(nextIndex++, invocation, argsHash);
  };

  return {
    invoke,
    unmatched: () => calls.filter((c) => !c.used && c.finished).map((c) => c.finished!.name),
  };
}
