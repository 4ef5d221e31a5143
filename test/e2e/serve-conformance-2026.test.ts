/**
 * The 2026-07-28 requirement set of `@modelcontextprotocol/conformance` 0.2.0-alpha.12 (installed as
 * the npm alias `@modelcontextprotocol/conformance-next`, beside 0.1.16 which serve-conformance.test.ts
 * runs for the 2025-11-25 era) against `codecall serve --http` in front of the same conformance
 * fixture server. The suite's own baseline check (`--expected-failures`) fails the run on a failure
 * that is not in test/fixtures/conformance/expected-failures-2026-07-28.yaml and on an entry there
 * that now passes, so the baseline stays exact; each entry is argued in docs/server.md.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, spawnServe } from './serve-helpers.js';

const run = promisify(execFile);
const CONFORMANCE = join(
  ROOT,
  'node_modules',
  '@modelcontextprotocol',
  'conformance-next',
  'dist',
  'index.js',
);
const BASELINE = join(ROOT, 'test', 'fixtures', 'conformance', 'expected-failures-2026-07-28.yaml');

const dir = mkdtempSync(join(tmpdir(), 'codecall-conformance-2026-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('codecall serve --http under the 2026-07-28 conformance requirements', () => {
  it(
    'passes every scenario outside the argued baseline, and the baseline is not stale',
    { timeout: 300_000 },
    async () => {
      const configPath = join(dir, 'codecall.json');
      writeFileSync(
        configPath,
        JSON.stringify({
          mcpServers: {
            fixture: {
              command: process.execPath,
              args: [join(ROOT, 'test', 'fixtures', 'servers', 'conformance-server.mjs')],
              deferLoading: false,
            },
            // The 2026 scenarios' tools (MRTR, stateless diagnostics): a 2026-07-28 upstream whose
            // input_required rounds, progress and errors codecall relays to the suite's client.
            fixture2026: {
              command: process.execPath,
              args: [join(ROOT, 'test', 'fixtures', 'servers', 'conformance-server-2026.mjs')],
              protocol: '2026-07-28',
              deferLoading: false,
            },
          },
          history: { path: join(dir, 'history.sqlite') },
          serve: { originalNames: true, waitForServersMs: 60_000 },
        }),
      );
      const serve = spawnServe(['--http', '--mcp-2026', '--port', '0', '--config', configPath]);
      try {
        const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
        const result = await run(
          process.execPath,
          [
            CONFORMANCE,
            'server',
            '--url',
            url,
            '--requirements',
            '2026-07-28',
            '--expected-failures',
            BASELINE,
            '-o',
            join(dir, 'results'),
          ],
          { cwd: dir, timeout: 240_000, maxBuffer: 32 * 1024 * 1024 },
        ).then(
          (ok) => ({ ...ok, code: 0 }),
          (error: { stdout?: string; stderr?: string; code?: number }) => ({
            stdout: error.stdout ?? '',
            stderr: error.stderr ?? '',
            code: error.code ?? 1,
          }),
        );
        const out = result.stdout;
        const planned = /Running requirements 2026-07-28 \((\d+) scenarios\)/.exec(out);
        expect(Number(planned?.[1]), out.slice(0, 2000)).toBeGreaterThanOrEqual(50);
        const summary = out.slice(out.indexOf('=== SUMMARY ==='));
        const rows = [...summary.matchAll(/^[✓✗] (\S+): (\d+) passed, (\d+) failed/gm)];
        expect(rows.length, summary).toBe(Number(planned?.[1]));
        // The scenarios codecall serves on the modern leg: tools and HTTP behaviour.
        const passing = new Set(rows.filter((m) => m[3] === '0' && Number(m[2]) > 0).map((m) => m[1]!));
        for (const name of [
          'tools-list',
          'tools-call-simple-text',
          'tools-call-error',
          'dns-rebinding-protection',
        ]) {
          expect(passing.has(name), `${name}\n${summary}`).toBe(true);
        }
        // The checks the summary does not count: SHOULD warnings, read from each scenario's checks.json.
        const statuses = new Map<string, string>();
        const warnings: string[] = [];
        for (const file of readdirSync(join(dir, 'results'), { recursive: true, encoding: 'utf8' })) {
          if (!file.endsWith('checks.json')) continue;
          const checks = JSON.parse(readFileSync(join(dir, 'results', file), 'utf8')) as {
            id: string;
            status: string;
          }[];
          for (const check of checks) {
            statuses.set(check.id, check.status);
            if (check.status === 'WARNING') warnings.push(`${file}: ${check.id}`);
          }
        }
        expect(warnings, summary).toEqual([]);
        // List changes on subscriptions/listen, and input_required on prompts/get (SEP-2575, SEP-2322).
        for (const id of [
          'sep-2575-server-sends-tools-list-changed-on-subscription',
          'sep-2575-server-sends-prompts-list-changed-on-subscription',
          'sep-2575-server-honors-notification-filter',
          'sep-2322-non-tool-incomplete',
          'sep-2322-non-tool-complete',
        ])
          expect(statuses.get(id), `${id}\n${summary}`).toBe('SUCCESS');
        expect(summary, `${summary}\n${result.stderr}`).toMatch(
          /Baseline check passed: all failures are expected\./,
        );
        expect(summary).not.toMatch(/Unexpected failures|Baseline is stale/);
        expect(result.code, `${summary}\n${result.stderr}`).toBe(0);
      } finally {
        serve.child.kill('SIGTERM');
        await serve.exited;
      }
    },
  );
});
