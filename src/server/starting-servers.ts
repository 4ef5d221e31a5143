/**
 * @module
 * How `codecall serve` answers calls that race its servers' start-up (servers connect in the
 * background): `search_tools` waits a bounded time for servers still starting before it ranks,
 * a direct call of a name that a starting server may own waits for that server (bounded by its
 * connect timeout), and a name of a server that failed is refused with the reason.
 */
import { assignIdentifiers, type ToolPool } from '../tools/index.js';
import { setLongTimeout, type LongTimeout } from '../util/long-timeout.js';

/**
 * Settles when every server's first connection attempt has, after `timeoutMs`, or when `signal`
 * aborts, whichever comes first. Never rejects.
 */
export async function waitForStartingServers(
  pool: ToolPool,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<void> {
  if (timeoutMs <= 0 || signal.aborted || !pool.upstreams().some((u) => pool.isStarting(u.name))) return;
  let timer: LongTimeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    await Promise.race([
      pool.started(),
      new Promise<void>((resolve) => {
        timer = setLongTimeout(resolve, timeoutMs);
        onAbort = resolve;
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    timer?.cancel();
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The servers whose tools a direct (pass-through) name may be: those whose `<namespace>__` prefix
 * it has, as pass-through names are made; with `originalNames`, when none has, every server
 * (a tool may keep its upstream name).
 */
export function ownersOfDirectName(pool: ToolPool, name: string, originalNames: boolean): string[] {
  const servers = pool.upstreams().map((u) => u.name);
  const owners: string[] = [];
  for (const [server, namespace] of assignIdentifiers(servers)) {
    const prefix = `${namespace}__`.replace(/[^A-Za-z0-9_-]/g, '_');
    if (name.startsWith(prefix) && name.length > prefix.length) owners.push(server);
  }
  return owners.length === 0 && originalNames ? servers : owners;
}

/** Waits for those of `servers` still starting (see {@link ToolPool.whenStarted}). */
export async function waitForServers(
  pool: ToolPool,
  servers: readonly string[],
  signal: AbortSignal,
): Promise<void> {
  await Promise.all(servers.filter((s) => pool.isStarting(s)).map((s) => pool.whenStarted(s, signal)));
}

/**
 * Why the tools of `servers` are unavailable, for those that failed: `MCP server "x" failed to
 * start (its command was not found)`, in the pool's public words (no command line, path, URL or
 * stderr); undefined when none failed.
 */
export function failedServersText(pool: ToolPool, servers: readonly string[]): string | undefined {
  const failed: string[] = [];
  for (const server of servers) {
    const failure = pool.failureOf(server);
    if (failure !== undefined) failed.push(`MCP server "${server}" failed to start (${failure})`);
  }
  if (failed.length === 0) return undefined;
  return `${failed.join('; ')}, so ${failed.length === 1 ? 'its' : 'their'} tools are unavailable`;
}
