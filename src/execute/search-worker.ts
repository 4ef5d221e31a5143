/**
 * @module
 * The search worker thread's entry (see {@link SearchWorkerHost}): holds its own copy of the tool
 * index, fed the catalog and usage diffs in order by the host, and answers queries off the host's
 * event loop. Messages are handled one at a time, in the order they were posted, so a query
 * always sees every update posted before it.
 */
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { openEmbeddings } from './open-embeddings.js';
import type { SearchWorkerReply, SearchWorkerRequest } from './search-host.js';
import { createToolSearch, type ToolSearch } from '../search/index.js';

/**
 * Niceness of this thread: when the machine's cores are contended, the host's main thread (which
 * answers every client) runs before one client's queries. Linux only, where `setpriority` on
 * "process" 0 applies to the calling thread alone (elsewhere it would lower the whole process).
 */
const SEARCH_WORKER_NICENESS = 10;
if (process.platform === 'linux') {
  try {
    setPriority(0, SEARCH_WORKER_NICENESS);
  } catch {
    // Not permitted here: the worker runs at the process's priority.
  }
}

let search: ToolSearch | undefined;
let closeEmbeddings: () => Promise<void> = () => Promise.resolve();
let queue: Promise<void> = Promise.resolve();

function errorPayload(error: unknown): NonNullable<SearchWorkerReply['error']> {
  const e = error as { code?: unknown; message?: unknown; details?: unknown } | null;
  return {
    code: typeof e?.code === 'string' ? e.code : 'SEARCH_FAILED',
    message: typeof e?.message === 'string' ? e.message : String(error),
    ...(e?.details !== undefined ? { details: e.details } : {}),
  };
}

async function handle(request: SearchWorkerRequest): Promise<void> {
  switch (request.type) {
    case 'open': {
      const embeddings = request.embeddings
        ? await openEmbeddings(request.embeddings.config, request.embeddings.baseDir)
        : undefined;
      if (embeddings) closeEmbeddings = () => embeddings.close();
      search = createToolSearch({
        ...request.ranking,
        tools: request.tools,
        state: request.state,
        ...(embeddings
          ? {
              embed: embeddings.embed,
              embeddingCache: embeddings.embeddingCache,
              ...(embeddings.embeddingWeight !== undefined
                ? { embeddingWeight: embeddings.embeddingWeight }
                : {}),
              ...(embeddings.embeddingGuard !== undefined
                ? { embeddingGuard: embeddings.embeddingGuard }
                : {}),
              ...(embeddings.embeddingFlatShare !== undefined
                ? { embeddingFlatShare: embeddings.embeddingFlatShare }
                : {}),
            }
          : {}),
      });
      return;
    }
    case 'add':
      return search?.addTools(request.tools);
    case 'remove':
      return search?.removeTools(request.names);
    case 'sequence':
      return search?.recordSequence(request.names);
    case 'usage':
      return search?.recordUsage(request.usage);
    case 'close':
      await closeEmbeddings();
      parentPort?.close();
      return;
    case 'search': {
      try {
        if (!search) throw new Error('the search worker was not opened');
        const result = await search.searchAsync(request.query, request.options);
        parentPort?.postMessage({ id: request.id, result } satisfies SearchWorkerReply);
      } catch (error) {
        parentPort?.postMessage({ id: request.id, error: errorPayload(error) } satisfies SearchWorkerReply);
      }
      return;
    }
  }
}

parentPort?.on('message', (request: SearchWorkerRequest) => {
  queue = queue
    .then(() => handle(request))
    .catch((error: unknown) => {
      // An update that failed (or an embedder that could not open) leaves the worker unusable:
      // say so to every later query instead of answering from a stale index.
      search = undefined;
      if (request.type === 'open' || request.type === 'add' || request.type === 'remove') {
        parentPort?.postMessage({ id: -1, error: errorPayload(error) } satisfies SearchWorkerReply);
      }
    });
});
