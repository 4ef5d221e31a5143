/**
 * The client scenarios of `@modelcontextprotocol/conformance` 0.2.0-alpha.12 (the npm alias
 * `@modelcontextprotocol/conformance-next`) against codecall's upstream side: the suite starts its
 * own server per scenario and runs test/fixtures/conformance/upstream-client.mjs, a ToolPool from the
 * built dist/ that connects it in the revision asked for, lists its tools and calls each one.
 *
 * Each scenario that applies runs on its own (one at a time: the suite's `--requirements` mode runs
 * dozens at once). The OAuth scenarios listed run with an `oauth` entry and a login by the real
 * `codecall auth login` (see the fixture). Every scenario is expected to pass or to
 * fail exactly as below, each failure argued in docs/mcp-2026.md § Conformance of the upstream side:
 * a pass that starts failing and a failure that starts passing both fail this test.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './serve-helpers.js';

const run = promisify(execFile);
const CONFORMANCE = join(
  ROOT,
  'node_modules',
  '@modelcontextprotocol',
  'conformance-next',
  'dist',
  'index.js',
);
const CLIENT = join(ROOT, 'test', 'fixtures', 'conformance', 'upstream-client.mjs');

const dir = mkdtempSync(join(tmpdir(), 'codecall-upstream-conformance-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `pass`, or the number of checks expected to fail (argued in docs/mcp-2026.md). */
type Expected = 'pass' | { failed: number };

const SCENARIOS: { revision: string; scenario: string; expected: Expected }[] = [
  { revision: '2026-07-28', scenario: 'tools_call', expected: 'pass' },
  { revision: '2026-07-28', scenario: 'request-metadata', expected: 'pass' },
  { revision: '2026-07-28', scenario: 'sep-2322-client-request-state', expected: 'pass' },
  { revision: '2026-07-28', scenario: 'http-standard-headers', expected: 'pass' },
  { revision: '2026-07-28', scenario: 'json-schema-ref-no-deref', expected: 'pass' },
  // The fixture calls every tool with {}; this check wants the tool's schema argument echoed.
  { revision: '2026-07-28', scenario: 'json-schema-2020-12-preservation', expected: { failed: 1 } },
  { revision: '2026-07-28', scenario: 'http-invalid-tool-headers', expected: 'pass' },
  { revision: '2026-07-28', scenario: 'http-custom-headers', expected: 'pass' },
  // OAuth (docs/upstream-auth.md): the fixture logs in with the real `codecall auth login`.
  { revision: '2026-07-28', scenario: 'auth/metadata-default', expected: 'pass' },
  { revision: '2026-07-28', scenario: 'auth/basic-cimd', expected: 'pass' },
  { revision: '2026-07-28', scenario: 'auth/pre-registration', expected: 'pass' },
  { revision: '2026-07-28', scenario: 'auth/iss-wrong-issuer', expected: 'pass' },
  { revision: '2026-07-28', scenario: 'auth/offline-access-scope', expected: 'pass' },
  // A step-up (403 insufficient_scope) mid-run needs a person; codecall's servers have none.
  { revision: '2026-07-28', scenario: 'auth/scope-step-up', expected: { failed: 2 } },
  { revision: '2025-11-25', scenario: 'auth/metadata-var1', expected: 'pass' },
  { revision: '2025-11-25', scenario: 'auth/token-endpoint-auth-basic', expected: 'pass' },
  { revision: '2025-11-25', scenario: 'initialize', expected: 'pass' },
  { revision: '2025-11-25', scenario: 'tools_call', expected: 'pass' },
  { revision: '2025-11-25', scenario: 'sse-retry', expected: 'pass' },
  // codecall forwards an upstream's elicitation to its own client, which fills the form (defaults
  // included); the fixture answers with empty content.
  { revision: '2025-11-25', scenario: 'elicitation-sep1034-client-defaults', expected: { failed: 5 } },
];

describe("codecall's upstream side under the conformance suite's client scenarios", () => {
  it.each(SCENARIOS)(
    '$revision $scenario',
    { timeout: 240_000 },
    async ({ revision, scenario, expected }) => {
      const result = await run(
        process.execPath,
        [
          CONFORMANCE,
          'client',
          '--command',
          `"${process.execPath}" "${CLIENT}"`,
          '--scenario',
          scenario,
          '--spec-version',
          revision,
          '--timeout',
          '120000',
          '-o',
          join(dir, `${revision}-${scenario}`),
        ],
        { cwd: dir, timeout: 200_000, maxBuffer: 32 * 1024 * 1024 },
      ).then(
        (ok) => ({ ...ok, code: 0 }),
        (error: { stdout?: string; stderr?: string; code?: number }) => ({
          stdout: error.stdout ?? '',
          stderr: error.stderr ?? '',
          code: error.code ?? 1,
        }),
      );
      const out = `${result.stdout}\n${result.stderr}`;
      const row = /Passed: (\d+)\/(\d+), (\d+) failed/.exec(out);
      expect(row, out.slice(-4000)).not.toBeNull();
      const failed = Number(row![3]);
      expect(Number(row![2]), out.slice(-4000)).toBeGreaterThan(0); // checks ran
      expect(failed, out.slice(-4000)).toBe(expected === 'pass' ? 0 : expected.failed);
    },
  );
});
