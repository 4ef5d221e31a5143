/**
 * @module
 * Connects an in-process MCP server to a client over the SDK's linked in-memory transports.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * A transport factory for `ToolPool.open(…, { transports })`: each call makes a fresh server
 * with `createServer`, links it to a new in-memory pair and returns the client side (so a
 * reconnect gets a fresh server, as a restarted process would).
 *
 * @example
 * ```ts
 * const pool = await ToolPool.open({}, { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } });
 * ```
 */
export function inMemoryTransport(createServer: () => McpServer | Server): () => Promise<Transport> {
  return async () => {
    const [client, server] = InMemoryTransport.createLinkedPair();
    await createServer().connect(server);
    return client;
  };
}
