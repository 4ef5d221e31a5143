/**
 * @module
 * The limits an `exec` job may lower are the sandbox limits of the configuration, every one of
 * them (the job schema derives from the config schema, so a new limit cannot be forgotten), and
 * nothing else.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SANDBOX_LIMITS } from '../../../src/config/defaults.js';
import { parseJobSpec } from '../../../src/jobs/job-spec.js';

describe('parseJobSpec limits', () => {
  it('accepts every sandbox limit', () => {
    const names = Object.keys(DEFAULT_SANDBOX_LIMITS);
    expect(names).toContain('maxPendingToolArgsBytes');
    const limits = Object.fromEntries(names.map((name) => [name, 1]));
    const spec = parseJobSpec({ kind: 'exec', code: 'console.log(1)', limits });
    expect(spec.kind === 'exec' && spec.limits).toEqual(limits);
  });

  it('refuses what is not a limit (pool mode, size, code bytes, typos) naming the field', () => {
    for (const key of ['mode', 'workers', 'maxCodeBytes', 'maxToolCall']) {
      expect(() => parseJobSpec({ kind: 'exec', code: 'x', limits: { [key]: 1 } })).toThrow(
        new RegExp(`limits: .*${key}`),
      );
    }
  });
});
