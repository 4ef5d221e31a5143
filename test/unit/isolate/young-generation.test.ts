/**
 * Sandbox isolates get young generations of DEFAULT_SANDBOX_SEMI_SPACE_MB semi-spaces once the
 * engine is loaded (isolated-vm alone gives 4 MB at 256 MB of heap), starting at
 * DEFAULT_SANDBOX_MIN_SEMI_SPACE_MB, and an idle isolate does not pay for it in resident memory.
 */
import ivm from 'isolated-vm';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_SANDBOX_MIN_SEMI_SPACE_MB,
  DEFAULT_SANDBOX_SEMI_SPACE_MB,
} from '../../../src/config/defaults.js';
import '../../../src/isolate/engine.js';

const MB = 1_048_576;

describe('young generation of sandbox isolates', () => {
  it('is sized by DEFAULT_SANDBOX_SEMI_SPACE_MB, not by the memory limit alone', () => {
    const isolate = new ivm.Isolate({ memoryLimit: 256 });
    try {
      const stats = isolate.getHeapStatisticsSync();
      // The heap limit is the old generation (the memory limit) plus the young generation.
      expect(stats.heap_size_limit - 256 * MB).toBeGreaterThanOrEqual(2 * DEFAULT_SANDBOX_SEMI_SPACE_MB * MB);
      // Semi-spaces start at DEFAULT_SANDBOX_MIN_SEMI_SPACE_MB (V8's own start is 1 MB), reserved
      // but not touched: an idle isolate's resident heap stays a few MB.
      expect(stats.total_heap_size).toBeGreaterThanOrEqual(DEFAULT_SANDBOX_MIN_SEMI_SPACE_MB * MB);
      expect(stats.total_physical_size).toBeLessThan(4 * MB);
    } finally {
      isolate.dispose();
    }
  });
});
