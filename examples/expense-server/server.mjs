#!/usr/bin/env node
// The example expense MCP server: ~20 team members, 2,400 expense line items, budgets by level.
//   node examples/expense-server/server.mjs                 stdio
//   node examples/expense-server/server.mjs --http [--port N]   Streamable HTTP on 127.0.0.1
// Imports the installed package (`codecall demo <dir>` writes this file and its configuration into
// a folder of your own); in a checkout the import refers to the checkout itself (run `npm run
// build` first; `npm ci` does it).
import { runTestServer } from 'codecall/testing';

const args = process.argv.slice(2);
const http = args.includes('--http');
const portAt = args.indexOf('--port');
const port = portAt >= 0 ? Number(args[portAt + 1]) : undefined;
if (port !== undefined && !(Number.isInteger(port) && port >= 0 && port < 65536)) {
  console.error('usage: server.mjs [--http [--port N]]');
  process.exitCode = 2;
} else {
  const endpoint = await runTestServer({ server: 'expenses', http, ...(port === undefined ? {} : { port }) });
  if (endpoint) {
    const stop = () => void endpoint.close();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
}
