/**
 * @module
 * One turn of a script that may call the client's tools. Client tools are bound beside the
 * configured MCP servers' tools as `tools.client.<name>`; the first call to one pauses the
 * script (after a short settle, so the calls of a `Promise.all` pause together): the run stops,
 * its journal keeps every call made so far, and the pending client calls go back to the client.
 * The client's answers are appended to the journal as those calls' results, and the script runs
 * again in replay: calls already made are answered from the journal, so the script goes on where
 * it paused without calling any MCP tool twice (see `execute/journaled-invoker.ts`).
 */
import { DEFAULT_VENDOR_PAUSE_SETTLE_MS } from '../config/defaults.js';
import { isCodecallError } from '../errors.js';
import type { CodecallRuntime } from '../execute/index.js';
import type { RunJournal, RunJournalStarted } from '../store/index.js';
import type { Approver } from '../tools/index.js';
import type { ExecutionResult, SandboxToolBinding, ToolInvoker } from '../types.js';

/** Namespace of the client's tools inside the sandbox: `tools.client.<name>`. */
export const CLIENT_NAMESPACE = 'client';

/** A client tool as the sandbox sees it. */
export interface ClientTool {
  /** The client's name for it. */
  name: string;
  /** Identifier-safe member: `tools.client.<member>`. */
  member: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

/** A client tool call the paused script waits for. */
export interface PendingClientCall {
  /** Position of the call in the run's journal. */
  index: number;
  /** The client's tool name. */
  name: string;
  input: unknown;
}

/** How a script turn ended. */
export type ScriptTurn =
  { kind: 'paused'; calls: PendingClientCall[] } | { kind: 'done'; result: ExecutionResult };

/** The client's answer to one pending call. */
export interface ClientAnswer {
  index: number;
  ok: boolean;
  /** The result the script receives (when `ok`). */
  result?: unknown;
  /** The message the script's error carries (when not `ok`). */
  error?: string;
}

/** The qualified name of a client tool (what the journal records). */
export function clientQualifiedName(member: string): string {
  return `${CLIENT_NAMESPACE}.${member}`;
}

/** Identifier-safe member name of a client tool name (`get-team` → `get_team`). */
export function clientMember(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9_$]/g, '_');
  return /^[0-9]/.test(safe) ? `_${safe}` : safe;
}

/** Options of {@link runScriptTurn}. */
export interface RunScriptTurnOptions {
  runtime: CodecallRuntime;
  code: string;
  journal: RunJournal;
  /** True when the journal holds the earlier turns of this script. */
  replay: boolean;
  clientTools: readonly ClientTool[];
  signal?: AbortSignal | undefined;
  /** @defaultValue {@link DEFAULT_VENDOR_PAUSE_SETTLE_MS} */
  settleMs?: number;
  /** Decides the script's calls of configured tools that need approval. @defaultValue the runtime's */
  approver?: Approver | undefined;
}

const PAUSED = Symbol('paused on a client tool');

/** Runs (or resumes) a script until it ends or waits for the client. */
export async function runScriptTurn(options: RunScriptTurnOptions): Promise<ScriptTurn> {
  const controller = new AbortController();
  const outer = options.signal;
  const onAbort = (): void => controller.abort(outer?.reason);
  if (outer?.aborted) onAbort();
  else outer?.addEventListener('abort', onAbort, { once: true });
  let paused = false;
  let timer: NodeJS.Timeout | undefined;
  const byName = new Map(options.clientTools.map((t) => [clientQualifiedName(t.member), t]));
  const invoke: ToolInvoker = ({ signal }) => {
    if (!paused) {
      paused = true;
      timer = setTimeout(() => controller.abort(PAUSED), options.settleMs ?? DEFAULT_VENDOR_PAUSE_SETTLE_MS);
    }
    // Never answered in this turn: the client answers it, and a replay reads the answer.
    return new Promise((_resolve, reject) => {
      const stop = (): void => reject(new Error('The script paused for the client.'));
      if (signal.aborted) stop();
      else signal.addEventListener('abort', stop, { once: true });
    });
  };
  const tools: SandboxToolBinding[] = options.clientTools.map((t) => ({
    name: clientQualifiedName(t.member),
    namespace: CLIENT_NAMESPACE,
    member: t.member,
  }));
  let result: ExecutionResult;
  try {
    result = await options.runtime.execute(options.code, {
      journal: options.journal,
      replay: options.replay,
      signal: controller.signal,
      extraTools: { tools, invoke },
      ...(options.approver !== undefined ? { approver: options.approver } : {}),
    });
  } catch (error) {
    // The journal refused the replay (the script diverged, a call in doubt): the script's failure.
    if (!isCodecallError(error)) throw error;
    result = {
      status: 'error',
      stdout: '',
      stderr: '',
      error: { code: 'RUNTIME_ERROR', message: error.message },
      toolCalls: [],
      stats: { wallMs: 0, cpuMs: 0, toolResultBytes: 0, stdoutBytes: 0 },
    };
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onAbort);
  }
  if (!paused || controller.signal.reason !== PAUSED) return { kind: 'done', result };
  const entries = await options.journal.entries();
  const finished = new Set(entries.flatMap((e) => (e.type === 'finished' ? [e.index] : [])));
  const calls = entries
    .filter(
      (e): e is RunJournalStarted => e.type === 'started' && !finished.has(e.index) && byName.has(e.name),
    )
    .map((e) => ({ index: e.index, name: byName.get(e.name)!.name, input: e.args }));
  return { kind: 'paused', calls };
}

/** Records the client's answers to the pending calls as their results in the journal. */
export async function recordClientAnswers(
  journal: RunJournal,
  answers: readonly ClientAnswer[],
): Promise<void> {
  const entries = await journal.entries();
  for (const answer of answers) {
    const started = entries.find(
      (e): e is RunJournalStarted => e.type === 'started' && e.index === answer.index,
    );
    if (started === undefined) continue;
    await journal.append({
      type: 'finished',
      index: answer.index,
      name: started.name,
      argsHash: started.argsHash,
      ok: answer.ok,
      ...(answer.ok ? { result: answer.result } : { error: answer.error ?? 'the tool failed' }),
      at: Date.now(),
    });
  }
}

/** The pending client calls of a paused run (started, never finished), from its journal. */
export async function pendingClientCalls(journal: RunJournal): Promise<RunJournalStarted[]> {
  const entries = await journal.entries();
  const finished = new Set(entries.flatMap((e) => (e.type === 'finished' ? [e.index] : [])));
  return entries.filter(
    (e): e is RunJournalStarted =>
      e.type === 'started' && !finished.has(e.index) && e.name.startsWith(`${CLIENT_NAMESPACE}.`),
  );
}
