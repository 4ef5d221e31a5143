/**
 * @module
 * List changes for 2026-07-28 clients on `subscriptions/listen` (spec 2026-07-28
 * `basic/patterns/subscriptions.mdx`; changelog Major 4, which replaces the 2025 GET stream and
 * its unsolicited `notifications/*\/list_changed`). The SDK's serving entries own the listen
 * streams (acknowledgement, the client's filter, the subscription id on every notification,
 * teardown on close, the bound on open streams); codecall only says when its lists changed:
 *
 * - **tools**: the pass-through tools a 2026 client lists changed (an upstream connected,
 *   re-listed a changed list, dropped or was removed) — the same comparison the 2025 server makes
 *   before its `sendToolListChanged` (served-lists.ts);
 * - **prompts, resources**: the set of connected upstreams changed (each may bring or take
 *   prompts and resources), or an upstream told codecall its prompt or resource list changed.
 *
 * One node tells its own listeners what its own pool saw: every node connects to the same
 * upstreams, so a listener on any node hears of a change once that node's pool has it.
 */
import type { CodecallRuntime } from '../execute/index.js';
import { watchServedLists } from './served-lists.js';

/** What {@link notifyListChanges} calls; the SDK's `ServerNotifier` has this shape. */
export interface ListChangeNotifier {
  toolsChanged(): void;
  promptsChanged(): void;
  resourcesChanged(): void;
}

/** Options of {@link notifyListChanges}. */
export interface ListChangesOptions {
  runtime: CodecallRuntime;
  /** Whether upstream tools are passed through (else the tool list never changes). */
  passThrough: boolean;
  originalNames: boolean;
  notify: ListChangeNotifier;
}

/**
 * Calls `options.notify` whenever a list a 2026-07-28 client reads from this node changed; the
 * returned function stops it (idempotent). A throwing notifier never breaks the pool.
 */
export function notifyListChanges(options: ListChangesOptions): () => void {
  const { runtime, notify } = options;
  const lists = watchServedLists(runtime, {
    passThrough: options.passThrough,
    originalNames: options.originalNames,
    onToolsChanged: () => notify.toolsChanged(),
    // An upstream that came or left brought or took its prompts and resources: tell listeners either way.
    onUpstreamsChanged: () => {
      safely(() => notify.promptsChanged());
      safely(() => notify.resourcesChanged());
    },
  });
  const offUpstream = runtime.tools.onUpstreamNotification((_server, notification) => {
    if (notification.method === 'notifications/prompts/list_changed') safely(() => notify.promptsChanged());
    else if (notification.method === 'notifications/resources/list_changed')
      safely(() => notify.resourcesChanged());
  });
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    lists.stop();
    offUpstream();
  };
}

/** Runs a notifier; its failure must not break the pool's notifications. */
function safely(send: () => void): void {
  try {
    send();
  } catch {
    // ignored: see above
  }
}
