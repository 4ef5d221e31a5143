/**
 * The container image's HEALTHCHECK script (deploy/healthcheck.mjs), run outside a container:
 * given the command line it would read from PID 1, it passes while a real `codecall serve --http`
 * bound as in the image (0.0.0.0, a token) answers on that port, fails once the server is gone,
 * and passes for a command without a port (the worker).
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../fixtures/temp-dir.js';
import { ROOT, spawnServe, type ServeProcess } from './serve-helpers.js';

const HEALTHCHECK = join(ROOT, 'deploy', 'healthcheck.mjs');

/** Exit code of `node deploy/healthcheck.mjs <words…>`. */
function healthcheck(words: string[]): Promise<number> {
  return promisify(execFile)(process.execPath, [HEALTHCHECK, ...words], { timeout: 30_000 }).then(
    () => 0,
    (error: { code: number }) => error.code,
  );
}

const started: ServeProcess[] = [];
afterEach(async () => {
  for (const serve of started.splice(0)) {
    if (serve.child.exitCode === null && serve.child.signalCode === null) serve.child.kill('SIGKILL');
    await serve.exited;
  }
});

describe('deploy/healthcheck.mjs', () => {
  it(
    'serve --http on 0.0.0.0 with a token: healthy while it answers (401), unhealthy once stopped',
    { timeout: 120_000 },
    async () => {
      const dir = tempDir('codecall-healthcheck-');
      const config = join(dir, 'codecall.json');
      writeFileSync(config, JSON.stringify({ mcpServers: {}, history: { enabled: false } }));
      const args = ['--http', '--host', '0.0.0.0', '--port', '0', '--config', config];
      const serve = spawnServe(args, { cwd: dir, env: { CODECALL_SERVE_TOKEN: 'secret-token' } });
      started.push(serve);
      const [, port] = await serve.waitFor(/listening on http:\/\/[^:]+:(\d+)\//);
      // The command line as PID 1 of the image shows it, with the port it got.
      const commandLine = ['node', '/usr/local/bin/codecall', 'serve', ...args.with(4, port!)];
      expect(await healthcheck(commandLine)).toBe(0);
      expect(await healthcheck(['codecall', 'serve', '--http', `--port=${port!}`])).toBe(0);

      serve.child.kill('SIGTERM');
      await serve.exited;
      expect(await healthcheck(commandLine)).toBe(1);
    },
  );

  it('a command without a port (the worker, serve over stdio) counts as healthy while it runs', async () => {
    expect(
      await healthcheck(['node', '/usr/local/bin/codecall', 'worker', '--redis', 'redis://redis:6379']),
    ).toBe(0);
    expect(await healthcheck(['node', '/usr/local/bin/codecall', 'serve', '--config', 'x.json'])).toBe(0);
  });
});
