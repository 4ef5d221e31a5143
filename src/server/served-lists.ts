/**
 * @module
 * What one served node's lists are made of, watched: the pass-through tools its clients list
 * (see {@link passThroughTools}) and the set of connected upstreams (each brings or takes its
 * prompts and resources). The 2025-11-25 server (`notifications/tools/list_changed`,
 * create-codecall-server.ts) and the 2026-07-28 listen streams (modern-listen.ts) both say a list
 * changed from this one comparison.
 */
import type { CodecallRuntime } from '../execute/index.js';
import type { CatalogTool } from '../tools/index.js';
import { passThroughTools, samePassThroughTools } from './gateway-names.js';

/** Options of {@link watchServedLists}. */
export interface ServedListsOptions {
  /** Whether upstream tools are passed through (else the tool list is empty and never changes). */
  passThrough: boolean;
  originalNames: boolean;
  /** The pass-through tools changed (an upstream connected, re-listed a changed list, left). */
  onToolsChanged(): void;
  /** The set of connected upstreams changed. */
  onUpstreamsChanged(): void;
}

/** A node's served lists, kept current by {@link watchServedLists}. */
export interface ServedLists {
  /** The pass-through tools, by the name clients see, as of the last catalog change. */
  readonly tools: ReadonlyMap<string, CatalogTool>;
  /** Stops watching (idempotent). */
  stop(): void;
}

/**
 * Watches the pool of `runtime` for changes of what a node serves. A callback runs after the
 * lists are updated; one that throws does not break the pool's notifications nor the other one.
 */
export function watchServedLists(runtime: CodecallRuntime, options: ServedListsOptions): ServedLists {
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
  let tools = exposed();
  let connected = connectedKey();
  const off = pool.onCatalogChange((_catalog, change) => {
    const touched = change.added.length + change.removed.length + change.changed.length > 0;
    const next = touched ? exposed() : tools;
    const changed = !samePassThroughTools(next, tools);
    tools = next;
    if (changed) safely(options.onToolsChanged);
    const nowConnected = connectedKey();
    if (nowConnected === connected) return;
    connected = nowConnected;
    safely(options.onUpstreamsChanged);
  });
  let stopped = false;
  return {
    get tools() {
      return tools;
    },
    stop() {
      if (stopped) return;
      stopped = true;
      off();
    },
  };
}

/** Runs a listener; its failure must not break the pool's notifications. */
function safely(listener: () => void): void {
  try {
    listener();
  } catch {
    // ignored: see above
  }
}
