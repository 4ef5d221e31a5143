/**
 * `codecall serve` in front of a stdio server that prints to stderr and never answers (as `npx -y`
 * behind a custom CA does): its log shows the whole start error, with the stderr tail, the names
 * of the environment passed and how to pass more, and with the child's control characters made
 * visible.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServe } from './serve-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-serve-start-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('codecall serve: a server that never answers', () => {
  it('logs the connect timeout with stderr, env names and the hint', { timeout: 30_000 }, async () => {
    const configPath = join(dir, 'codecall.json');
    writeFileSync(
      configPath,
      JSON.stringify({
        mcpServers: {
          stuck: {
            command: process.execPath,
            args: [
              '-e',
              'console.error("npm error code SELF_SIGNED_CERT_IN_CHAIN\\x1b]0;pwned\\x07"); setInterval(() => {}, 60_000)',
            ],
            env: { STUCK_API_TOKEN: 'sk-stuck-SECRET-7' },
            connectTimeoutMs: 4_000,
          },
        },
        history: { enabled: false },
      }),
    );
    const serve = spawnServe(['--config', configPath], {
      env: { NODE_EXTRA_CA_CERTS: join(dir, 'corporate-ca.pem') },
    });
    try {
      await serve.waitFor(/raise mcpServers\.stuck\.connectTimeoutMs/);
      // From the error on: Node itself warns about the missing CA file before that.
      const log = serve.stderr().slice(serve.stderr().indexOf('codecall serve: stuck:'));
      expect(log).toMatch(/^codecall serve: stuck: /);
      expect(log).toContain(
        'codecall serve: stuck: MCP server "stuck" did not start: no answer within 4000 ms (connectTimeoutMs).',
      );
      expect(log).toContain('\n  npm error code SELF_SIGNED_CERT_IN_CHAIN␛]0;pwned␇\n');
      expect(log).toMatch(
        /\n {2}Environment passed to it \(names only\): inherited [^;]*PATH[^;]*; from "env": STUCK_API_TOKEN\.\n/,
      );
      expect(log).toMatch(/\n {2}Set here but not passed: NODE_EXTRA_CA_CERTS[,.]/);
      expect(log).not.toContain('sk-stuck-SECRET-7');
      expect(log).not.toContain('corporate-ca.pem');
      expect(log).not.toContain('\x1b');
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
