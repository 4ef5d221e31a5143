/**
 * A local tool's zod refusal reads as "Invalid arguments: …": the error is told by its name and
 * issues, not by `instanceof`, so a schema of the caller's own zod copy reads the same.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, localTools, ToolPool } from '../../../src/tools/index.js';

describe('local tool errors', () => {
  it('a refinement the JSON Schema cannot carry fails the call with the prettified zod issues', async () => {
    const half = defineTool({
      name: 'half',
      description: 'Halves a positive number.',
      inputSchema: z.object({ n: z.number().refine((n) => n > 0, 'n must be positive') }),
      execute: ({ n }) => n / 2,
    });
    await using pool = await ToolPool.open({}, { transports: { math: localTools([half]) } });
    expect(await pool.call('math.half', { n: 4 }, { caller: 'code_execution' })).toBe('2');
    await expect(pool.call('math.half', { n: -1 }, { caller: 'code_execution' })).rejects.toThrow(
      /returned an error: Invalid arguments: .*n must be positive/s,
    );
  });
});
