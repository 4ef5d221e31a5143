/**
 * @module
 * A script on the vendor endpoints that calls a configured MCP tool needing approval: with no
 * approval channel (serve's default) the call is refused and never runs, the script's error naming
 * the tool and the setting; with an approver (`createVendorRoutes({ onApproval })`) it runs.
 * Driven by the unmodified `@anthropic-ai/sdk`; the model behind is a scripted Claude on the wire.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createLanguageModel } from '../../../src/providers/create-language-model.js';
import { startHttpServer, type HttpServerHandle } from '../../../src/server/index.js';
import { createExpenseServer, inMemoryTransport } from '../../../src/testing/servers/index.js';
import type { ApprovalRequest } from '../../../src/tools/index.js';
import { createVendorRoutes } from '../../../src/vendor-api/index.js';
import { anthropicMessage, WireServer } from '../providers/wire-server.js';

const TOKEN = 'vendor-approvals-token';
let runtime: CodecallRuntime;
let wire: WireServer;
const servers: HttpServerHandle[] = [];
const asked: ApprovalRequest[] = [];

/** A serve HTTP surface over the shared runtime, with or without an approver. */
async function serve(approve: boolean): Promise<Anthropic> {
  const scripted = createLanguageModel('anthropic:claude-wire-scripted', {
    apiKey: 'sk-wire',
    baseURL: wire.origin,
    maxRetries: 0,
  });
  const http = await startHttpServer({
    runtime,
    port: 0,
    token: TOKEN,
    routes: createVendorRoutes({
      runtime,
      model: (name) => (name === 'claude-scripted' ? scripted : undefined),
      modelNames: () => ['claude-scripted'],
      ...(approve
        ? {
            onApproval: (request: ApprovalRequest) => {
              asked.push(request);
              return true;
            },
          }
        : {}),
    }),
  });
  servers.push(http);
  return new Anthropic({ apiKey: TOKEN, baseURL: `http://127.0.0.1:${http.port}`, maxRetries: 0 });
}

beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    config: parseConfig(
      {
        mcpServers: {
          // flag_expense needs approval by configuration; delete_expense because it is destructive
          // (opened to code: destructive tools are direct-only by default).
          expenses: {
            command: 'unused-in-memory',
            tools: {
              flag_expense: { requireApproval: true },
              delete_expense: { allowedCallers: ['direct', 'code_execution'] },
            },
          },
        },
        sandbox: { workers: 1 },
        history: { enabled: false },
      },
      { file: '<vendor-approvals.test>' },
    ),
    history: false,
    tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
  });
  wire = await WireServer.open();
}, 120_000);

afterAll(async () => {
  for (const http of servers) await http.close();
  await wire?.close();
  await runtime?.close();
});

const SCRIPT = `const calls = [
  ['flag', () => tools.expenses.flag_expense({ expense_id: 'exp-00001', reason: 'check it' })],
  ['delete', () => tools.expenses.delete_expense({ expense_id: 'exp-00001' })],
];
for (const [name, call] of calls) {
  try {
    console.log(name, 'ran', JSON.stringify(await call()));
  } catch (error) {
    console.log(name, 'refused:', error.message);
  }
}`;

async function runScript(client: Anthropic): Promise<string> {
  wire.enqueue(
    '/v1/messages',
    {
      body: anthropicMessage({
        content: [{ type: 'tool_use', id: 'toolu_model_1', name: 'execute_code', input: { code: SCRIPT } }],
        stopReason: 'tool_use',
      }),
    },
    { body: anthropicMessage({ content: [{ type: 'text', text: 'Done.' }], stopReason: 'end_turn' }) },
  );
  const message = await client.messages.create({
    model: 'claude-scripted',
    max_tokens: 256,
    tools: [{ type: 'code_execution_20250825', name: 'code_execution' }],
    messages: [{ role: 'user', content: 'Flag and delete exp-00001.' }],
  });
  const result = message.content.find((b) => b.type === 'code_execution_tool_result');
  expect(result).toMatchObject({ content: { type: 'code_execution_result', return_code: 0 } });
  return (result as { content: { stdout: string } }).content.stdout;
}

describe('vendor endpoints: configured MCP tools under approvals', () => {
  it('refuses a call that needs approval when nobody can approve (naming the tool and the setting), and it never runs', async () => {
    const stdout = await runScript(await serve(false));
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(/^flag refused: .*expenses\.flag_expense.*vendor endpoints.*cannot ask anyone/);
    expect(lines[0]).toContain('mcpServers.expenses.tools.flag_expense.requireApproval is true');
    expect(lines[1]).toMatch(/^delete refused: .*expenses\.delete_expense.*destructiveHint/);
    expect(lines[1]).toContain('approvals.requireForDestructive');
  }, 120_000);

  it('runs them with an approver (onApproval), which is asked once per call', async () => {
    // The same expense the refused script tried: it was never deleted, so this delete succeeds.
    const stdout = await runScript(await serve(true));
    expect(stdout).toBe(
      'flag ran {"flagged":"exp-00001","reason":"check it"}\ndelete ran {"deleted":"exp-00001"}\n',
    );
    expect(asked.map((r) => [r.tool, r.caller])).toEqual([
      ['expenses.flag_expense', 'code_execution'],
      ['expenses.delete_expense', 'code_execution'],
    ]);
  }, 120_000);
});
