// The floor for `codecall serve` (stdio) answering `initialize`: the least an MCP server on Node
// can do, a bare MCP SDK server over stdio with no tools and no child servers (node's start, the
// SDK's import, the handshake). bench/stdio-startup.bench.ts times it against codecall in the same run.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'bare-stdio-server', version: '0.0.0' });
await server.connect(new StdioServerTransport());
