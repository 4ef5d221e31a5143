/**
 * Destructive tools need approval wherever the call comes from, direct-only tools included: the
 * agent loop of `codecall run` (the scripted model, the real expense server in memory, the CLI's
 * approver as `codecall run` wires it) offers `delete_expense` after a search; the model's direct
 * call is denied without a terminal, with a message naming `--approve` and the configuration
 * keys that allow it, and never reaches the server; `--approve` lets it run.
 */
import { PassThrough } from 'node:stream';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createOrchestrator, type Orchestrator } from '../../../src/agent/index.js';
import { createCliApprover } from '../../../src/cli/cli-approver.js';
import type { CliIo } from '../../../src/cli/command.js';
import { parseConfig } from '../../../src/config/index.js';
import { ScriptedLanguageModel, text, toolCall } from '../../../src/testing/index.js';
import { createExpenseServer } from '../../../src/testing/servers/index.js';

const agents: Orchestrator[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

/** A terminal-less CLI: stdin and stderr are not TTYs (a pipe, CI). */
function pipedIo(): CliIo {
  return {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    cwd: process.cwd(),
    env: {},
    signal: new AbortController().signal,
  };
}

/** The run of the report: search, then the offered direct-only delete on a read-only question. */
async function runDelete(
  approve: string[],
): Promise<{ content: string; isError: boolean; called: string[] }> {
  const called: string[] = [];
  const model = new ScriptedLanguageModel([
    toolCall('search_tools', { query: 'delete an expense' }),
    {
      label: 'delete_expense is offered after the search',
      expect: (request) => request.tools?.some((tool) => tool.name === 'expenses__delete_expense') === true,
      response: toolCall('expenses__delete_expense', { expense_id: 'exp-00002' }),
    },
    text('Done.'),
  ]);
  const agent = await createOrchestrator({
    model,
    mode: 'code',
    config: parseConfig(
      { mcpServers: { expenses: { command: 'unused' } }, history: { enabled: false } },
      { file: '<destructive-approval.test>' },
    ),
    runtimeOptions: {
      history: false,
      tools: {
        transports: {
          expenses: async () => {
            const [client, server] = InMemoryTransport.createLinkedPair();
            await createExpenseServer().connect(server);
            const send = client.send.bind(client);
            client.send = (message: JSONRPCMessage, options) => {
              if ('method' in message && message.method === 'tools/call')
                called.push(String((message.params as { name?: unknown }).name));
              return send(message, options);
            };
            return client;
          },
        },
      },
      // As `codecall run` wires it (src/cli/commands/run.ts).
      onApproval: createCliApprover({ io: pipedIo(), command: 'run', approve }),
    },
  });
  agents.push(agent);
  const result = await agent.run('How much did Ada spend on travel in Q3?');
  model.assertComplete();
  const call = result.steps[1]!.toolCalls[0]!;
  expect(call.name).toBe('expenses__delete_expense');
  return { content: call.content, isError: call.isError, called };
}

describe('destructive direct-only tools', () => {
  it('a direct call of a destructive tool closed to code is denied without a terminal, naming the flag and keys', async () => {
    const { content, isError, called } = await runDelete([]);
    expect(isError).toBe(true);
    expect(content).toMatch(/^Tool expenses\.delete_expense was not approved/);
    expect(content).toContain('codecall run --approve expenses.delete_expense (or --approve all)');
    expect(content).toContain('mcpServers.expenses.tools.delete_expense.requireApproval');
    expect(content).toContain('approvals.requireForDestructive');
    expect(called).toEqual([]);
  });

  it('--approve lets the direct call run', async () => {
    const { content, isError, called } = await runDelete(['expenses.delete_expense']);
    expect(isError).toBe(false);
    expect(content).toBe('{"deleted":"exp-00002"}');
    expect(called).toEqual(['delete_expense']);
  });
});
