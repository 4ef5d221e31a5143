/**
 * What a person reads before approving a call, on every surface that asks: the terminal prompt
 * of `codecall run` / `exec` (real readline on TTY-flagged streams), the elicitation message of
 * `codecall serve` (a real MCP client and server linked in memory) and a waiting job's line in
 * `codecall jobs`. Each names every top-level field (a field past a long value is not hidden),
 * says what was shortened, and shows bidirectional and control characters as escapes.
 */
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { createCliApprover } from '../../../src/cli/cli-approver.js';
import type { CliIo } from '../../../src/cli/command.js';
import { formatRecord } from '../../../src/cli/commands/jobs.js';
import {
  DEFAULT_APPROVAL_PROMPT_MAX_FIELDS,
  DEFAULT_APPROVAL_PROMPT_MAX_VALUE_CHARS,
  DEFAULT_CLI_INPUT_MAX_TEXT_CHARS,
} from '../../../src/config/defaults.js';
import { elicitationApprover } from '../../../src/server/elicitation-approver.js';
import type { ApprovalRequest } from '../../../src/tools/index.js';

/** Bidirectional and invisible controls a prompt must never send as they are. */
const HIDDEN = /[\u0080-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/u;

/**
 * A long note first, the field that matters after it, a bidi override that would show
 * "ALL-RECORDS" reversed, and more fields than a prompt shows with values.
 */
function hostileArgs(): Record<string, unknown> {
  const args: Record<string, unknown> = {
    note: 'please review '.repeat(60),
    id: 'ALL-RECORDS',
    label: 'safe\u202Esdrocer-lla\u202C\u200F',
    filter: { where: { owner: 'x'.repeat(500) }, all: true },
  };
  for (let index = 0; Object.keys(args).length < DEFAULT_APPROVAL_PROMPT_MAX_FIELDS + 3; index++)
    args[`extra_${index}`] = index;
  return args;
}

/** What every surface must show for {@link hostileArgs}. */
function expectFullyNamed(shown: string): void {
  expect(shown).toContain('"id":"ALL-RECORDS"');
  // The bidi override and marks are escapes, not characters.
  expect(shown).not.toMatch(HIDDEN);
  expect(shown).toContain('"label":"safe\\u202esdrocer-lla\\u202c\\u200f"');
  // Long values are shortened, and the prompt says which.
  expect(shown).toContain(
    `"note":"${'please review '.repeat(60).slice(0, DEFAULT_APPROVAL_PROMPT_MAX_VALUE_CHARS - 2)}`,
  );
  expect(shown).toContain('the values of "note", "filter"');
  // Fields past the shown ones are named.
  const names = Object.keys(hostileArgs()).slice(DEFAULT_APPROVAL_PROMPT_MAX_FIELDS);
  expect(names).toHaveLength(3);
  expect(shown).toContain(`… and 3 more fields: ${names.map((name) => JSON.stringify(name)).join(', ')}`);
  expect(shown).toContain(
    `3 fields past the first ${DEFAULT_APPROVAL_PROMPT_MAX_FIELDS} are named without their values`,
  );
}

function request(args: unknown, signal: AbortSignal): ApprovalRequest {
  return {
    tool: 'records.delete\u202Egnp.txt',
    server: 'records',
    args,
    caller: 'code_execution',
    reason: 'the server marks it destructive (destructiveHint)',
    callIndex: 0,
    signal,
  };
}

describe('approval prompts', () => {
  it('the terminal prompt of run / exec names every field, says what it shortened, escapes bidi', async () => {
    const stdin = Object.assign(new PassThrough(), { isTTY: true });
    const stderr = Object.assign(new PassThrough(), { isTTY: true });
    let written = '';
    stderr.on('data', (chunk: Buffer) => (written += chunk.toString()));
    const io: CliIo = {
      stdin,
      stdout: new PassThrough(),
      stderr,
      cwd: process.cwd(),
      env: {},
      signal: new AbortController().signal,
    };
    const approver = createCliApprover({ io, command: 'run', approve: [] });
    const answer = Promise.resolve(approver(request(hostileArgs(), new AbortController().signal)));
    await expect.poll(() => written).toMatch(/\[y\/N\] $/);
    stdin.write('n\n');
    expect(await answer).toMatchObject({ approved: false });
    expect(written).toContain('approve records.delete\\u202egnp.txt({');
    expectFullyNamed(written);
  });

  it('the elicitation message of serve names every field, says what it shortened, escapes bidi', async () => {
    const server = new Server({ name: 'gateway', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
      const decision = await elicitationApprover(server, extra)(request(call.params.arguments, extra.signal));
      return { content: [{ type: 'text', text: JSON.stringify(decision) }] };
    });
    const client = new Client({ name: 'person', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const messages: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (elicit) => {
      messages.push(elicit.params.message);
      return { action: 'decline' };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    await client.connect(clientSide);
    try {
      await client.callTool({ name: 'anything', arguments: hostileArgs() });
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(/^Approve records\.delete\\u202egnp\.txt\(\{/);
      expectFullyNamed(messages[0]!);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it("a waiting job's line in codecall jobs names every field, says what it shortened, escapes bidi", () => {
    const line = formatRecord({
      id: 'job-1',
      kind: 'exec',
      config: 'default',
      state: 'waiting-approval',
      attemptsMade: 1,
      attempts: 3,
      createdAt: 0,
      approval: {
        tool: 'records.delete\u202Egnp.txt',
        args: hostileArgs(),
        argsHash: 'hash',
        callIndex: 1,
        reason: 'destructive',
        requestedAt: 0,
        expiresAt: 86_400_000,
      },
    });
    expect(line).toContain('waits for approval of records.delete\\u202egnp.txt (call 1) {');
    expectFullyNamed(line);
  });

  it("a job waiting for an upstream's input request says what it waits for, escaped and cut, and who answers", () => {
    const message = `Deploy to prod\u202Edorp?${'!'.repeat(DEFAULT_CLI_INPUT_MAX_TEXT_CHARS)}`;
    const line = formatRecord({
      id: 'job-2',
      kind: 'exec',
      config: 'default',
      state: 'waiting-approval',
      attemptsMade: 1,
      attempts: 3,
      createdAt: 0,
      approval: {
        tool: 'modern.deploy',
        args: { env: 'prod' },
        argsHash: 'hash',
        callIndex: 2,
        reason: "modern.deploy's server asks for input (elicitation/create)",
        requestedAt: 0,
        expiresAt: 86_400_000,
        input: { method: 'elicitation/create', params: { message }, ask: 0, requestHash: 'h', round: 0 },
      },
    });
    expect(line).toContain('waits for the answer to elicitation/create "Deploy to prod\\u202edorp?!');
    expect(line).toContain('…" from modern.deploy (call 2) until 1970-01-02T00:00:00.000Z');
    expect(line).toMatch(/the MCP client of its task answers it \(tasks\/update\)$/);
    expect(line).not.toMatch(HIDDEN);
    expect(line).not.toContain('codecall jobs approve');
  });
});
