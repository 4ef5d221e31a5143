/**
 * Unknown tool names: the script gets `UNKNOWN_TOOL` with a bounded "did you mean" in both
 * sandbox modes; in process mode the lookups happen in the worker that runs the script, never
 * in the host (a flood of made-up names costs the host a count and a refusal each). Real
 * isolates and a real worker process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { compileScript } from '../../../src/compile/index.js';
import { DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN } from '../../../src/config/defaults.js';
import { SandboxPool, type SandboxMode } from '../../../src/isolate/index.js';
import { unknownNameLookups } from '../../../src/isolate/unknown-names.js';
import type { SandboxToolBinding } from '../../../src/types.js';

/** 2,000 tools `ns<k>.tool_<i>`, whose qualified names are spelled `server-<k>.tool-<i>`. */
const tools: SandboxToolBinding[] = Array.from({ length: 2_000 }, (_, i) => ({
  name: `server-${i % 4}.tool-${i}`,
  namespace: `ns${i % 4}`,
  member: `tool_${i}`,
}));

const SCRIPT = `
  const names = ['server-1.tool-33x', 'ns1.tool_33x'];
  for (let i = 0; i < 10; i++) names.push('ns2.tol_' + (1000 + 4 * i + 2));
  const settled = await Promise.allSettled(names.map((name) => callTool(name, {})));
  for (const s of settled) console.log(s.reason.code + ' ' + s.reason.message);
`;

describe.each<SandboxMode>(['in-process', 'process'])('unknown tool names (%s)', (mode) => {
  let pool: SandboxPool;
  beforeAll(async () => {
    pool = await SandboxPool.open({ mode, workers: 1, killGraceMs: 500 });
  });
  afterAll(() => pool.close());

  it('are refused with UNKNOWN_TOOL and capped suggestions, looked up where the script runs', async () => {
    const compiled = compileScript(SCRIPT);
    if (!compiled.ok) expect.fail(compiled.error.message);
    const before = unknownNameLookups();
    const result = await pool.run({ code: compiled.code, tools, invoke: async () => 'unused' });
    const hostLookups = unknownNameLookups() - before;
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(12);
    for (const line of lines) expect(line.startsWith('UNKNOWN_TOOL Unknown tool "')).toBe(true);
    // A qualified spelling finds its tool as the script writes it, in both modes.
    expect(lines[0]).toMatch(
      /^UNKNOWN_TOOL Unknown tool "server-1\.tool-33x"\. Did you mean: tools\.ns1\.tool_33[,?]/,
    );
    expect(lines[1]).toMatch(
      /^UNKNOWN_TOOL Unknown tool "ns1\.tool_33x"\. Did you mean: tools\.ns1\.tool_33[,?]/,
    );
    const suggested = lines.filter((line) => line.includes('Did you mean: tools.'));
    expect(suggested).toHaveLength(DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN);
    expect(lines.at(-1)).toContain(
      `this script already called ${DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN} unknown names.`,
    );
    // The host looks names up only when the script runs in it.
    expect(hostLookups).toBe(mode === 'process' ? 0 : DEFAULT_MAX_SUGGESTION_LOOKUPS_PER_RUN);
  });
});
