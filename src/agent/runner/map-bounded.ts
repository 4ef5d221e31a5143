/**
 * @module
 * Bounded parallelism for the tool calls of one step, over `p-queue` (the host's one limiter).
 */
import PQueue from 'p-queue';

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
export function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const queue = new PQueue({ concurrency: limit });
  return Promise.all(items.map((item) => queue.add(() => work(item))));
}
