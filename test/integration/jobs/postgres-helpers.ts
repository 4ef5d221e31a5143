/**
 * A real PostgreSQL 15 server for the Postgres job backend tests: `initdb` into a temp dir,
 * `pg_ctl start` on a free loopback port (trust auth, no fsync), stopped and removed after. Run as
 * root (CI containers), the server runs as the `postgres` user (initdb refuses root).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { freePort } from './jobs-helpers.js';

/** Debian's versioned dirs (15 first), then PATH-like places. */
function binDirs(): string[] {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root).sort((a, b) => (a === '15' ? -1 : b === '15' ? 1 : Number(b) - Number(a)))
    : [];
  return [...versions.map((v) => join(root, v, 'bin')), '/usr/local/bin', '/usr/bin'];
}

/** Directory holding `initdb` and `pg_ctl`, or undefined when PostgreSQL is not installed. */
export function postgresBinDir(): string | undefined {
  return binDirs().find((dir) => existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl')));
}

/** A running PostgreSQL server. */
export interface PostgresHandle {
  /** `postgres://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  stop(): Promise<void>;
}

/** util-linux's `runuser`, found where Debian puts it even when root's PATH lacks the sbin folders. */
const RUNUSER = ['/usr/sbin/runuser', '/sbin/runuser'].find((path) => existsSync(path)) ?? 'runuser';

function run(bin: string, args: string[], asUser: string | undefined): void {
  const command = asUser === undefined ? bin : RUNUSER;
  const argv = asUser === undefined ? args : ['-u', asUser, '--', bin, ...args];
  const result = spawnSync(command, argv, { encoding: 'utf8', timeout: 120_000 });
  if (result.error !== undefined)
    throw new Error(`${command} ${argv.join(' ')} could not run: ${result.error.message}`);
  if (result.status !== 0)
    throw new Error(
      `${bin} ${args.join(' ')} failed (${result.status ?? result.signal}): ${result.stderr}${result.stdout}`,
    );
}

/** Starts PostgreSQL on a free loopback port; resolves once it accepts connections. */
export async function startPostgres(): Promise<PostgresHandle> {
  const bin = postgresBinDir();
  if (bin === undefined) throw new Error('PostgreSQL is not installed (apt-get install postgresql-15).');
  const asUser = userInfo().uid === 0 ? 'postgres' : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'codecall-pg-'));
  const data = join(dir, 'data');
  if (asUser !== undefined) {
    const ids = spawnSync('id', ['-u', asUser], { encoding: 'utf8' });
    const gids = spawnSync('id', ['-g', asUser], { encoding: 'utf8' });
    chownSync(dir, Number(ids.stdout.trim()), Number(gids.stdout.trim()));
  }
  chmodSync(dir, 0o700);
  const port = await freePort();
  run(join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8'], asUser);
  run(
    join(bin, 'pg_ctl'),
    [
      '-D',
      data,
      '-l',
      join(dir, 'log'),
      '-w',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`,
      'start',
    ],
    asUser,
  );
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop'], asUser);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
