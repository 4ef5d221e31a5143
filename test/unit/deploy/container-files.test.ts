/**
 * The Dockerfile and compose.yaml, checked without a container runtime (none runs where the
 * tests do): every command and flag they give codecall exists, every file they copy or name is
 * in the repository, the runtime stage is not root, and the configuration the PostgreSQL profile
 * uses loads. docs/deploy.md says how they were exercised.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { serveHelp } from '../../../src/cli/commands/serve.help.js';
import { workerHelp } from '../../../src/cli/commands/worker.help.js';
import { DEFAULT_SERVE_PORT } from '../../../src/config/defaults.js';
import { parseConfig } from '../../../src/config/index.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  profiles?: string[];
  ports?: string[];
  environment?: Record<string, string>;
}
const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };

const HELP: Record<string, string> = { serve: serveHelp.usage, worker: workerHelp.usage };

/** Compose's `${NAME:-default}` to its default (what runs when NAME is unset). */
const withDefaults = (word: string): string => word.replace(/\$\{[A-Z_]+:-([^}]*)\}/g, '$1');

/** Checks a codecall command line: a real command, real flags, files that the image holds. */
function checkCommand(argv: string[]): void {
  const [command, ...rest] = argv.map(withDefaults);
  expect(Object.keys(HELP)).toContain(command);
  for (const word of rest.filter((w) => w.startsWith('--')))
    expect(HELP[command!]).toContain(`${word.split('=')[0]} `);
  const config = rest[rest.indexOf('--config') + 1];
  if (rest.includes('--config')) {
    expect(config).toMatch(/^\/app\//);
    expect(existsSync(join(ROOT, config!.slice('/app/'.length)))).toBe(true);
  }
}

describe('compose.yaml', () => {
  it('runs serve, worker and Redis; the postgres profile adds PostgreSQL with its own serve and worker', () => {
    const services = compose.services;
    const always = Object.keys(services).filter((name) => services[name]!.profiles === undefined);
    const postgres = Object.keys(services).filter((name) => services[name]!.profiles?.includes('postgres'));
    expect(always.sort()).toEqual(['redis', 'serve', 'worker']);
    expect(postgres.sort()).toEqual(['postgres', 'serve-postgres', 'worker-postgres']);
    expect(services.redis!.image).toMatch(/^redis:/);
    expect(services.postgres!.image).toMatch(/^postgres:/);
  });

  it('gives codecall only commands and flags it has, with files the image holds', () => {
    const codecall = Object.entries(compose.services).filter(([, s]) => s.image === 'codecall:local');
    expect(codecall.map(([name]) => name).sort()).toEqual([
      'serve',
      'serve-postgres',
      'worker',
      'worker-postgres',
    ]);
    for (const [name, service] of codecall) {
      expect(service.build, name).toBe('.');
      checkCommand(service.command!);
    }
    expect(compose.services.serve!.command).toEqual(
      expect.arrayContaining(['--redis', 'redis://redis:6379']),
    );
    expect(compose.services['worker-postgres']!.command).toContain('--postgres');
  });

  it('serves over HTTP with a required token, published on the host loopback only', () => {
    for (const name of ['serve', 'serve-postgres']) {
      const service = compose.services[name]!;
      expect(service.command!.slice(0, 2)).toEqual(['serve', '--http']);
      expect(service.environment?.CODECALL_SERVE_TOKEN).toMatch(/^\$\{CODECALL_SERVE_TOKEN:\?/);
      for (const port of service.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it("the postgres profile's configuration loads and names the PostgreSQL job backend", () => {
    const file = join(ROOT, 'deploy', 'codecall.postgres.json');
    const config = parseConfig(JSON.parse(readFileSync(file, 'utf8')), {
      file,
      env: { CODECALL_POSTGRES_URL: 'postgres://u@postgres:5432/codecall' },
    });
    expect(config.jobs).toMatchObject({
      backend: 'postgres',
      connection: 'postgres://u@postgres:5432/codecall',
    });
    const server = config.mcpServers.expenses!;
    expect(server.transport === 'stdio' && server.args[0]).toBe('/app/examples/expense-server/server.mjs');
    expect(existsSync(join(ROOT, 'examples/expense-server/server.mjs'))).toBe(true);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const lines = dockerfile.split('\n');
  const stages = lines.filter((line) => line.startsWith('FROM '));
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));

  it('is multi-stage on a Debian-based Node 24 image, and the runtime stage runs as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim$/m);
    for (const stage of stages) expect(stage).toMatch(/^FROM \$\{NODE_IMAGE\}/);
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime.indexOf('USER node')).toBeLessThan(runtime.indexOf('CMD'));
    // No build toolchain in the runtime stage.
    expect(runtime).not.toContain('g++');
  });

  it('defaults to codecall serve --http with flags that exist', () => {
    expect(dockerfile).toMatch(/^ENTRYPOINT \["codecall"\]$/m);
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(dockerfile)![1]!) as string[];
    expect(cmd.slice(0, 2)).toEqual(['serve', '--http']);
    for (const word of cmd.filter((w) => w.startsWith('--'))) expect(serveHelp.usage).toContain(`${word} `);
  });

  it('has a HEALTHCHECK running deploy/healthcheck.mjs, which the image holds, on the port serve defaults to', () => {
    const instruction = /^HEALTHCHECK\b(?:.*\\\n)*.*/m.exec(runtime)?.[0].replace(/\\\n\s*/g, ' ');
    expect(instruction).toMatch(/^HEALTHCHECK --interval=\d+s --timeout=\d+s /);
    const cmd = JSON.parse(/ CMD (\[.*\])$/.exec(instruction!)![1]!) as string[];
    expect(cmd).toEqual(['node', '/app/deploy/healthcheck.mjs']);
    expect(existsSync(join(ROOT, 'deploy', 'healthcheck.mjs'))).toBe(true);
    expect(runtime).toMatch(/^COPY --from=build \/src\/deploy \.\/deploy$/m);
    // Without --port it asks serve's default port, the one the image exposes.
    const port = /^const DEFAULT_SERVE_PORT = (\d+);$/m.exec(read('deploy/healthcheck.mjs'))?.[1];
    expect(Number(port)).toBe(DEFAULT_SERVE_PORT);
    expect(runtime).toMatch(new RegExp(`^EXPOSE ${DEFAULT_SERVE_PORT}$`, 'm'));
  });

  it('copies only what exists or is built, and sets only environment variables codecall reads', () => {
    for (const [, from] of dockerfile.matchAll(/^COPY --from=build \/src\/(\S+)/gm)) {
      if (from === 'dist') continue; // built in the build stage
      expect(existsSync(join(ROOT, from!)), from).toBe(true);
    }
    const sources = ['src/config/load-config.ts', 'src/config/state-directory.ts'].map(read).join('\n');
    for (const name of ['CODECALL_HISTORY_PATH', 'CODECALL_STATE_DIR']) expect(sources).toContain(name);
    // The optional job backends it installs are the package's peer dependencies.
    const peers = (JSON.parse(read('package.json')) as { peerDependencies: Record<string, string> })
      .peerDependencies;
    const named = /\[('bullmq'.*?)\]\.map/
      .exec(dockerfile)![1]!
      .split(', ')
      .map((n) => n.slice(1, -1));
    for (const name of named) expect(peers, name).toHaveProperty([name]);
  });

  it('.dockerignore keeps the host build, secrets and history out of the context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of ['.git', 'node_modules', 'dist', '.env', '**/.codecall'])
      expect(ignored).toContain(entry);
  });
});
