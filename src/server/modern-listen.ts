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
 *   before its `sendToolListChanged` (create-codecall-server.ts);
 * - **prompts, resources**: the set of connected upstreams changed (each may bring or take
 *   prompts and resources), or an upstream told codecall its prompt or resource list changed.
 *
 * One node tells its own listeners what its own pool saw: every node connects to the same
 * upstreams, so a listener on any node hears of a change once that node's pool has it.
 */
import type { CodecallRuntime } from '../execute/index.js';
import type { CatalogTool } from '../tools/index.js';
import { passThroughTools, samePassThroughTools } from './gateway-names.js';

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
  const pool = runtime.tools;
  const exposed = (): Map<string, CatalogTool> =>
    options.passThrough ? passThroughTools(pool.catalog(), options.originalNames) : new Map();
  const connectedKey = (): string =>
    JSON.stringify(
      pool
        .upstreams()
        .filter((u) => u.state === 'connected')
        .map((u) => u.name),
    );
  const safely = (send: () => void): void => {
    try {
      send();
    } catch {
      // A listener's failure must not break the pool's notifications.
    }
  };
  let direct = exposed();
  let connected = connectedKey();
  const offCatalog = pool.onCatalogChange((_catalog, change) => {
    const touched = change.added.length + change.removed.length + change.changed.length > 0;
    const next = touched ? exposed() : direct;
    const changed = !samePassThroughTools(next, direct);
    direct = next;
    if (changed) safely(() => notify.toolsChanged());
    const nowConnected = connectedKey();
    if (nowConnected === connected) return;
    connected = nowConnected;
    // An upstream that left took its prompts and resources along: tell listeners either way.
    safely(() => notify.promptsChanged());
    safely(() => notify.resourcesChanged());
  });
  const offUpstream = pool.onUpstreamNotification((_server, notification) => {
    if (notification.method === 'notifications/prompts/list_changed') safely(() => notify.promptsChanged());
    else if (notification.method === 'notifications/resources/list_changed')
      safely(() => notify.resourcesChanged());
  });
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    offCatalog();
    offUpstream();
  };
}
