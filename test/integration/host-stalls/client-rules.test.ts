/**
 * Another client's tool lists in a configuration (`disabledTools`, `includeTools`, …) are globs
 * matched against every tool an untrusted server lists, at every catalog build. A glob such as
 * `*a*a*a…*b` against long names made of `a` froze the host for seconds per name when it ran as a
 * backtracking `RegExp`; the event loop must stay responsive while such a catalog is built.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createHostileServer } from '../../../src/testing/servers/hostile-server.js';
import { inMemoryTransport } from '../../../src/testing/servers/in-memory.js';
import { MAX_STALL_MS, withLoopDelay } from './loop-delay.js';

const TOOL_COUNT = 200;

let dir: string | undefined;
let runtime: CodecallRuntime | undefined;

afterEach(async () => {
  await runtime?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it("builds a catalog under another client's pathological tool globs without stalling the host", async () => {
  dir = mkdtempSync(join(tmpdir(), 'codecall-client-rules-'));
  const tools = Array.from({ length: TOOL_COUNT }, (_, i) => ({
    name: `${'a'.repeat(100)}_${i}`,
    description: `Tool ${i}.`,
  }));
  tools.push({ name: 'aab', description: 'Matches the glob.' });
  const hostile = createHostileServer({ tools });
  const config = parseConfig(
    {
      mcpServers: {
        hostile: { command: 'unused', disabledTools: [`${'*a'.repeat(12)}*b`, 'a*b'] },
      },
      sandbox: { workers: 1 },
    },
    { file: join(dir, 'codecall.json'), env: {} },
  );
  const { value: names, maxStallMs } = await withLoopDelay(async () => {
    runtime = await CodecallRuntime.open({
      config,
      history: false,
      tools: { transports: { hostile: inMemoryTransport(hostile.create) }, requireAll: true },
    });
    return runtime.tools
      .catalog()
      .filter((tool) => tool.allowedCallers.length > 0)
      .map((tool) => tool.name);
  });
  // `aab` is off (`a*b`); every `a…a_i` is on (no glob matches it, after a backtracking regex's
  // exponential search of the first).
  expect(names).toHaveLength(TOOL_COUNT);
  expect(names).not.toContain('hostile.aab');
  expect(maxStallMs).toBeLessThan(MAX_STALL_MS);
}, 60_000);
