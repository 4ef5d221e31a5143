/**
 * @module
 * When a process-mode pool lets its workers spin for answers: the machine's load average, less
 * the pool's own running workers (a spinning worker is a runnable process counted in the very
 * average it is judged by), must be below the core count.
 */
import { describe, expect, it } from 'vitest';

import { roomToSpin } from '../../../src/isolate/sandbox-pool.js';

describe('roomToSpin', () => {
  it("leaves the pool's own running workers out of the load it compares with the cores", () => {
    // 2 cores, one worker of this pool spinning, load left over from earlier work: spin.
    expect(roomToSpin(2.4, 2, 1)).toBe(true);
    expect(roomToSpin(1.4, 2, 0)).toBe(true);
    // Load from elsewhere fills the cores: do not spin.
    expect(roomToSpin(3.2, 2, 1)).toBe(false);
    expect(roomToSpin(2, 2, 0)).toBe(false);
  });
});
