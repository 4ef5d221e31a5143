/**
 * @module
 * The memory of a whole process tree for benches (Linux /proc): the peak resident memory
 * (`VmHWM`) of this process and of every descendant alive now, summed. The sum of the peaks is
 * an upper bound of the tree's simultaneous peak; benches take it the same way on both sides of
 * a ratio, in a fresh process per measurement, just before the tree closes.
 */
import { readdirSync, readFileSync } from 'node:fs';

const MB = 1_048_576;

/** The tree's peak memory, and the share of processes whose command line names `serverMark`. */
export interface TreeMemory {
  /** Σ VmHWM of the process and its descendants, bytes. */
  peakBytes: number;
  /** The MCP server processes' share of {@link peakBytes}. */
  serverBytes: number;
  /** `name MB` per process, for the bench's log. */
  parts: string[];
}

/** Σ VmHWM over this process and every descendant alive now. */
export function treeMemory(serverMark = 'file-results-server'): TreeMemory {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      // The process ended while listed.
    }
  }
  let peakBytes = 0;
  let serverBytes = 0;
  const parts: string[] = [];
  const queue = [process.pid];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    queue.push(...(children.get(pid) ?? []));
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
      const isServer = readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(serverMark);
      const name = pid === process.pid ? 'host' : isServer ? 'server' : /Name:\s+(\S+)/.exec(status)?.[1];
      peakBytes += hwm;
      if (isServer) serverBytes += hwm;
      parts.push(`${name ?? '?'} ${(hwm / MB).toFixed(0)}`);
    } catch {
      // Ended meanwhile.
    }
  }
  return { peakBytes, serverBytes, parts };
}
