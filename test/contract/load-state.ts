/**
 * @module
 * What search starts from, read from a store the way the runtime reads it: graph counts plus the
 * query usages, oldest first (tests compare it with `ToolSearch.serialize()`).
 */
import type { ToolSearchState } from '../../src/search/index.js';
import type { GraphCountStore, QueryUsageStore } from '../../src/store/index.js';

export async function loadState(store: GraphCountStore & QueryUsageStore): Promise<ToolSearchState> {
  const counts = await store.loadCounts();
  const usages = await store.listUsages();
  const state: ToolSearchState = { version: 1, sequences: counts.sequences, transitions: counts.transitions };
  if (usages.length > 0) state.usages = usages.reverse().map((usage) => [usage.query, [...usage.tools]]);
  return state;
}
