/**
 * Approvals through `codecall serve`: the real bin over stdio, a real stdio expense server whose
 * destructive `delete_expense` is opened to code, and real MCP SDK clients. A client that
 * declares elicitation is asked (`elicitation/create`) and its answer decides; a client that
 * does not is refused with a reason; every decision lands in the audit trail.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteHistoryStore } from '../../src/store/sqlite-history-store.js';
import { BIN, ROOT, spawnServe } from './serve-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-serve-approvals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CONFIG = join(dir, 'codecall.json');
const HISTORY = join(dir, 'history.sqlite');
writeFileSync(
  CONFIG,
  JSON.stringify({
    mcpServers: {
      expenses: {
        command: process.execPath,
        args: [join(ROOT, 'examples', 'expense-server', 'server.mjs')],
        tools: { delete_expense: { allowedCallers: ['direct', 'code_execution'] } },
      },
    },
    history: { path: HISTORY },
    // Answer once the expense server is up (serve answers at once by default).
    serve: { waitForServersMs: 30_000 },
  }),
);

const deleteScript = (id: string): string =>
  `try { console.log(JSON.stringify(await tools.expenses.delete_expense({ expense_id: '${id}' }))); }
   catch (error) { console.log(error.code, error.message); }`;

function text(result: unknown): string {
  return (result as CallToolResult).content.map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

async function connect(elicitation: boolean): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'serve', '--config', CONFIG],
    cwd: ROOT,
    stderr: 'pipe',
  });
  const client = new Client(
    { name: 'e2e-approvals', version: '1.0.0' },
    elicitation ? { capabilities: { elicitation: { form: {} } } } : {},
  );
  await client.connect(transport);
  return client;
}

describe('codecall serve approvals', () => {
  it('asks a client that declares elicitation; approve runs the call, decline denies it', async () => {
    const client = await connect(true);
    const asked: ElicitRequest['params'][] = [];
    const answers: ElicitResult[] = [{ action: 'accept', content: { approve: true } }, { action: 'decline' }];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params);
      return answers.shift()!;
    });
    try {
      const approved = await client.callTool({
        name: 'execute_code',
        arguments: { code: deleteScript('exp-00002') },
      });
      expect(text(approved)).toContain('{"deleted":"exp-00002"}');
      const declined = await client.callTool({
        name: 'execute_code',
        arguments: { code: deleteScript('exp-00003') },
      });
      expect(text(declined)).toContain(
        'APPROVAL_DENIED Tool expenses.delete_expense was not approved (the client chose decline)',
      );
      expect(asked).toHaveLength(2);
      expect(asked[0]!.message).toMatch(
        /^Approve expenses\.delete_expense\(\{"expense_id":"exp-00002"\}\) from a script \(execute_code, call #1, line 1\)\?/,
      );
      expect(asked[0]).toMatchObject({
        requestedSchema: { properties: { approve: { type: 'boolean' } }, required: ['approve'] },
      });
    } finally {
      await client.close();
    }
    const store = await SqliteHistoryStore.open({ path: HISTORY });
    try {
      const rows = await store.listApprovals({ limit: 2 });
      expect(rows.map((row) => [row.outcome, row.decidedBy])).toEqual([
        ['denied', 'elicitation'],
        ['approved', 'elicitation'],
      ]);
    } finally {
      await store.close();
    }
  });

  it('denies for a client without elicitation, saying why', async () => {
    const client = await connect(false);
    try {
      const result = await client.callTool({
        name: 'execute_code',
        arguments: { code: deleteScript('exp-00004') },
      });
      expect(text(result)).toContain(
        'APPROVAL_DENIED Tool expenses.delete_expense was not approved (the MCP client did not declare the elicitation capability',
      );
      expect(text(result)).toContain('mcpServers.expenses.tools.delete_expense.requireApproval to false');
    } finally {
      await client.close();
    }
  });

  it('over Streamable HTTP, the client is asked and its answer decides', async () => {
    const serve = spawnServe(['--http', '--port', '0', '--config', CONFIG]);
    try {
      const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
      const client = new Client(
        { name: 'e2e-approvals-http', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } } },
      );
      const asked: string[] = [];
      client.setRequestHandler(ElicitRequestSchema, (request) => {
        asked.push(request.params.message);
        return { action: 'accept', content: { approve: true } };
      });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        const result = await client.callTool({
          name: 'execute_code',
          arguments: { code: deleteScript('exp-00005') },
        });
        expect(text(result)).toContain('{"deleted":"exp-00005"}');
        expect(asked).toHaveLength(1);
        expect(asked[0]).toMatch(/^Approve expenses\.delete_expense\(\{"expense_id":"exp-00005"\}\)/);
      } finally {
        await client.close();
      }
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
