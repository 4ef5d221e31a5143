/**
 * Sandbox isolates get young generations of DEFAULT_SANDBOX_SEMI_SPACE_MB semi-spaces once the
 * engine is loaded (isolated-vm alone gives 4 MB at 256 MB of heap), and an idle isolate does
 * not pay for it.
 */
import ivm from 'isolated-vm';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_SEMI_SPACE_MB } from '../../../src/config/defaults.js';
import '../../../src/isolate/engine.js';

const MB = 1_048_576;

describe('young generation of sandbox isolates', () => {
  it('is sized by DEFAULT_SANDBOX_SEMI_SPACE_MB, not by the memory limit alone', () => {
    const isolate = new ivm.Isolate({ memoryLimit: 256 });
    try {
      const stats = isolate.getHeapStatisticsSync();
      // The heap limit is the old generation (the memory limit) plus the young generation.
      expect(stats.heap_size_limit - 256 * MB).toBeGreaterThanOrEqual(2 * DEFAULT_SANDBOX_SEMI_SPACE_MB * MB);
      // Semi-spaces start small: an idle isolate's heap is a few MB, not the reserved size.
      expect(stats.total_heap_size).toBeLessThan(DEFAULT_SANDBOX_SEMI_SPACE_MB * MB);
    } finally {
      isolate.dispose();
    }
  });
});
