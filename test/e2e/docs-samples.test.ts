/**
 * @module
 * The sample output in README.md and docs/agent.md, and the byte counts quoted for the exec
 * example, are what today's code prints: the same commands `npm run docs:samples` runs are run
 * here and compared with the docs (times aside). A change to the output fails here until the
 * samples are regenerated.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  collectSamples,
  execClaims,
  ROOT,
  RUN_SAMPLE_DOCS,
  runSamplesIn,
  stableRunOutput,
  type Samples,
} from '../../scripts/docs-samples.js';
import { createExpenseData, overBudgetMembers } from '../../src/testing/index.js';

let samples: Samples;
beforeAll(() => {
  samples = collectSamples();
}, 180_000);

describe('docs samples', () => {
  it('the run sample is a real run: the header line, the steps, every answer line and the meter', () => {
    const lines = samples.run.trimEnd().split('\n');
    // The real run is what the test thinks it is (so comparing with the docs means something).
    expect(lines[0]).toBe('codecall run · demo:expense-demo · code mode · 2 tools offered');
    const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');
    expect(samples.run).toContain(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
    expect(lines.at(-1)).toMatch(/^tokens: [\d,]+ in context; kept out: [\d,]+ of tool results/);
    for (const doc of RUN_SAMPLE_DOCS) {
      const blocks = runSamplesIn(readFileSync(join(ROOT, doc), 'utf8'));
      expect(blocks.length, `${doc} has a <!-- sample: run-demo --> block`).toBeGreaterThan(0);
      for (const block of blocks) {
        expect(stableRunOutput(block), `${doc} is stale: run npm run docs:samples`).toBe(
          stableRunOutput(samples.run),
        );
      }
    }
  });

  it('the byte counts quoted for the exec example are what it reads and prints', () => {
    expect(samples.exec.toolResultBytes).toBeGreaterThan(400_000);
    const claims = Object.entries(execClaims(samples.exec));
    expect(claims.length).toBeGreaterThan(0);
    for (const [doc, patterns] of claims) {
      const text = readFileSync(join(ROOT, doc), 'utf8');
      for (const [pattern, wanted] of patterns) {
        expect(text.match(pattern)?.[0], `${doc} is stale: run npm run docs:samples`).toBe(wanted);
      }
    }
  });
});
