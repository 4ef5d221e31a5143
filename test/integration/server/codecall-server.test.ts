/**
 * `createCodecallServer` in process: the SDK's Client over a linked in-memory pair, against a
 * real runtime (worker-process sandbox) over in-memory MCP servers (the expense server and the
 * misbehaving server).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createCodecallServer, RunLimiter, type ExecuteCodeEvent } from '../../../src/server/index.js';
import {
  createExpenseServer,
  createMisbehavingServer,
  inMemoryTransport,
  type MisbehavingServerProbe,
} from '../../../src/testing/servers/index.js';
import { loadState } from '../../contract/load-state.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-server-'));
const configPath = join(dir, 'codecall.json');
writeFileSync(
  configPath,
  JSON.stringify({
    mcpServers: {
      // The commands are never spawned: in-memory transports replace them.
      expenses: { command: 'unused', tools: { flag_expense: { allowedCallers: ['direct'] } } },
      misc: { command: 'unused', deferLoading: false, tools: { slow: { deferLoading: true } } },
    },
    sandbox: { cpuTimeMs: 1_000, wallTimeMs: 20_000, memoryMb: 64 },
    history: { enabled: false },
  }),
);

let runtime: CodecallRuntime;
const probes: MisbehavingServerProbe[] = [];
const events: ExecuteCodeEvent[] = [];

beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    load: { path: configPath },
    history: false,
    tools: {
      transports: {
        expenses: inMemoryTransport(() => createExpenseServer()),
        misc: inMemoryTransport(() => {
          const { server, probe } = createMisbehavingServer({ name: 'misc' });
          probes.push(probe);
          return server;
        }),
      },
    },
  });
});

afterAll(async () => {
  await runtime?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function connect(
  options: {
    runLimiter?: RunLimiter;
    progressIntervalMs?: number;
    sequenceGapMs?: number;
    learning?: 'shared' | 'off';
  } = {},
): Promise<{ client: Client; server: Server; close: () => Promise<void> }> {
  const server = createCodecallServer({ runtime, onExecute: (e) => events.push(e), ...options });
  const client = new Client({ name: 'test-client', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  await client.connect(clientSide);
  return {
    client,
    server,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}

function text(result: unknown): string {
  const content = (result as CallToolResult).content;
  return content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
}

describe('createCodecallServer', () => {
  it('lists search_tools, execute_code and the tools open to direct calls', async () => {
    const { client, close } = await connect();
    try {
      expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
      expect(client.getInstructions()).toMatch(/search_tools/);
      const { tools } = await client.listTools();
      const names = tools.map((t) => t.name);
      expect(names.slice(0, 2)).toEqual(['search_tools', 'execute_code']);
      // misc has deferLoading: false → its direct tools pass through, except slow (deferred);
      // expenses keeps the default deferLoading: true → none of its tools pass through.
      expect(names).toContain('misc__echo');
      expect(names).toContain('misc__destroy');
      expect(names).not.toContain('misc__slow');
      expect(names.some((n) => n.startsWith('expenses'))).toBe(false);
      const execute = tools.find((t) => t.name === 'execute_code')!;
      expect(execute.description).toMatch(/tools\.<server>\.<tool>/);
      expect(execute.description).toMatch(/20 s/); // the configured wall time is quoted
      expect(execute.inputSchema.required).toEqual(['code']);
    } finally {
      await close();
    }
  });

  it('search_tools returns ranked tools with declarations; bad input is a tool error', async () => {
    const { client, close } = await connect();
    try {
      const found = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'expense line items of a team member' },
      });
      expect(found.isError).toBeFalsy();
      const body = text(found);
      expect(body).toMatch(/^\d+ tools? for "expense line items of a team member"/);
      expect(body).toMatch(
        /expenses\.get_expenses: in execute_code: await tools\.expenses\.get_expenses\(args\)/,
      );
      expect(body).toMatch(/```ts\n[\s\S]*get_expenses\(args\?: \{[\s\S]*```/);

      const direct = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'destroy everything' },
      });
      expect(text(direct)).toMatch(
        /misc\.destroy: not callable from code; call the tool "misc__destroy" directly/,
      );

      const regex = await client.callTool({
        name: 'search_tools',
        arguments: { query: 'flag_exp', regex: true },
      });
      expect(text(regex)).toMatch(/expenses\.flag_expense: not callable from code \(allowedCallers\)/);

      const badRegex = await client.callTool({
        name: 'search_tools',
        arguments: { query: '(', regex: true },
      });
      expect(badRegex.isError).toBe(true);
      const missing = await client.callTool({ name: 'search_tools', arguments: {} });
      expect(missing.isError).toBe(true);
      expect(text(missing)).toMatch(/needs "query"/);
    } finally {
      await close();
    }
  });

  it('execute_code returns stdout and the exit status; errors are results; the graph learns', async () => {
    const { client, close } = await connect();
    try {
      const ok = await client.callTool({
        name: 'execute_code',
        arguments: {
          code: `
            const { members } = await tools.expenses.get_team_members({});
            const { items } = await tools.expenses.get_expenses({ member_id: members[0].id, quarter: 'Q3' });
            console.log(members.length, Array.isArray(items));
          `,
        },
      });
      expect(ok.isError).toBeFalsy();
      expect(text(ok)).toBe('stdout:\n20 true\n\nexit status: ok after 2 tool calls');
      const edge = runtime.search
        .graphEdges()
        .find((e) => e.from === 'expenses.get_team_members' && e.to === 'expenses.get_expenses');
      expect(edge?.count).toBeGreaterThanOrEqual(1);

      const thrown = await client.callTool({
        name: 'execute_code',
        arguments: { code: 'console.log("before");\nthrow new Error("boom")' },
      });
      expect(thrown.isError).toBe(true);
      expect(text(thrown)).toMatch(/stdout:\nbefore[\s\S]*exit status: error \([A-Z_]+\)[\s\S]*boom/);

      const syntax = await client.callTool({ name: 'execute_code', arguments: { code: 'const = 1' } });
      expect(syntax.isError).toBe(true);
      expect(text(syntax)).toMatch(/SYNTAX_ERROR/);

      const forbidden = await client.callTool({
        name: 'execute_code',
        arguments: { code: `await tools.expenses.flag_expense({ expense_id: 'x', reason: 'y' })` },
      });
      expect(forbidden.isError).toBe(true);
      expect(text(forbidden)).toMatch(/allowedCallers/);

      const empty = await client.callTool({ name: 'execute_code', arguments: { code: '  ' } });
      expect(empty.isError).toBe(true);
      expect(text(empty)).toMatch(/empty code/);
    } finally {
      await close();
    }
  });

  it('hostile code is an error result and the next request is served normally', async () => {
    const { client, close } = await connect();
    try {
      const loop = await client.callTool({ name: 'execute_code', arguments: { code: 'while (true) {}' } });
      expect(loop.isError).toBe(true);
      expect(text(loop)).toMatch(/exit status: error/);
      const hog = await client.callTool({
        name: 'execute_code',
        arguments: { code: 'const a = []; while (true) a.push(new Array(1e6).fill(1));' },
      });
      expect(hog.isError).toBe(true);
      const next = await client.callTool({ name: 'execute_code', arguments: { code: 'console.log(6 * 7)' } });
      expect(text(next)).toBe('stdout:\n42\n\nexit status: ok');
    } finally {
      await close();
    }
  });

  it('passes direct calls through; unknown tools are protocol errors', async () => {
    const { client, close } = await connect();
    try {
      const echo = await client.callTool({ name: 'misc__echo', arguments: { text: 'hi', count: 2 } });
      expect(echo.isError).toBeFalsy();
      expect(JSON.parse(text(echo))).toEqual({ text: 'hi', count: 2 });
      const invalid = await client.callTool({ name: 'misc__echo', arguments: { count: 'x' } });
      expect(invalid.isError).toBe(true);
      const failing = await client.callTool({ name: 'misc__fail', arguments: { message: 'nope' } });
      expect(failing.isError).toBe(true);
      expect(text(failing)).toMatch(/nope/);
      // One "MCP error" prefix: the server sends the bare text, the client's SDK prefixes it.
      await expect(client.callTool({ name: 'misc__slow', arguments: { ms: 1 } })).rejects.toThrow(
        /^MCP error -32602: Unknown tool "misc__slow"/,
      );
    } finally {
      await close();
    }
  });

  it('consecutive direct calls of one session teach the tool graph', async () => {
    const count = (from: string, to: string): number =>
      runtime.search.graphEdges().find((e) => e.from === from && e.to === to)?.count ?? 0;
    const before = {
      forward: count('misc.echo', 'misc.plain_text'),
      back: count('misc.plain_text', 'misc.echo'),
    };
    const first = await connect();
    try {
      await first.client.callTool({ name: 'misc__echo', arguments: { text: 'a' } });
      // A failed call is not part of the sequence: echo → plain_text is still one pair.
      await first.client.callTool({ name: 'misc__fail', arguments: { message: 'x' } });
      await first.client.callTool({ name: 'misc__plain_text', arguments: {} });
      expect(count('misc.echo', 'misc.plain_text')).toBe(before.forward + 1);
      expect(count('misc.echo', 'misc.fail')).toBe(0);
    } finally {
      await first.close();
    }
    // Another session starts its own chain: its first call does not follow the other's last.
    const second = await connect();
    try {
      await second.client.callTool({ name: 'misc__echo', arguments: { text: 'b' } });
      expect(count('misc.plain_text', 'misc.echo')).toBe(before.back);
    } finally {
      await second.close();
    }
    const off = await connect({ sequenceGapMs: 0 });
    try {
      await off.client.callTool({ name: 'misc__echo', arguments: { text: 'c' } });
      await off.client.callTool({ name: 'misc__plain_text', arguments: {} });
      expect(count('misc.echo', 'misc.plain_text')).toBe(before.forward + 1);
    } finally {
      await off.close();
    }
  });

  it('learning "off": a session only reads the shared graph, nothing it does is recorded', async () => {
    const count = (from: string, to: string): number =>
      runtime.search.graphEdges().find((e) => e.from === from && e.to === to)?.count ?? 0;
    const script = `await tools.expenses.get_team_members({ level: 'L3' });
      await tools.expenses.get_budget_by_level({ level: 'L3', quarter: 'Q3' });`;
    const pair = ['expenses.get_team_members', 'expenses.get_budget_by_level'] as const;
    await runtime.flush();
    const before = {
      runs: (await loadState(runtime.history)).sequences,
      pair: count(...pair),
      direct: count('misc.echo', 'misc.plain_text'),
    };
    const off = await connect({ learning: 'off' });
    try {
      expect(text(await off.client.callTool({ name: 'execute_code', arguments: { code: script } }))).toMatch(
        /exit status: ok after 2 tool calls/,
      );
      await off.client.callTool({ name: 'misc__echo', arguments: { text: 'c' } });
      await off.client.callTool({ name: 'misc__plain_text', arguments: {} });
      await runtime.flush();
      expect((await loadState(runtime.history)).sequences).toBe(before.runs);
      expect(count(...pair)).toBe(before.pair);
      expect(count('misc.echo', 'misc.plain_text')).toBe(before.direct);
    } finally {
      await off.close();
    }
    // The default is one shared graph: the same run from another session is learned.
    const shared = await connect();
    try {
      await shared.client.callTool({ name: 'execute_code', arguments: { code: script } });
      await runtime.flush();
      expect((await loadState(runtime.history)).sequences).toBe(before.runs + 1);
      expect(count(...pair)).toBe(before.pair + 1);
    } finally {
      await shared.close();
    }
  });

  it('sends progress notifications when asked, with increasing progress', async () => {
    const { client, close } = await connect({ progressIntervalMs: 20 });
    try {
      const updates: Progress[] = [];
      const result = await client.callTool(
        {
          name: 'execute_code',
          arguments: { code: `await tools.misc.slow({ ms: 500 }); console.log('done')` },
        },
        undefined,
        { onprogress: (p) => updates.push(p) },
      );
      expect(text(result)).toMatch(/^stdout:\ndone/);
      expect(updates[0]?.message).toBe('started');
      expect(updates.some((u) => /^running for \d+ s$/.test(u.message ?? ''))).toBe(true);
      for (let i = 1; i < updates.length; i++)
        expect(updates[i]!.progress).toBeGreaterThan(updates[i - 1]!.progress);

      // Without a progress token, none are sent (the client would reject unknown tokens anyway).
      const quiet = await client.callTool({ name: 'execute_code', arguments: { code: 'console.log(1)' } });
      expect(text(quiet)).toMatch(/^stdout:\n1/);
    } finally {
      await close();
    }
  });

  it('a cancelled run stops: its tool call is cancelled upstream and the result is ABORTED', async () => {
    const { client, close } = await connect();
    try {
      const controller = new AbortController();
      const pending = client.callTool(
        {
          name: 'execute_code',
          arguments: {
            code: `await tools.misc.slow({ ms: 0, label: 'warm-up' });
                   await tools.misc.slow({ ms: 60000, label: 'cancel-me' }); console.log('never')`,
          },
        },
        undefined,
        { signal: controller.signal },
      );
      // Cancel once the long call is in flight on the upstream server.
      await expect.poll(() => probes.flatMap((p) => p.started), { timeout: 10_000 }).toContain('cancel-me');
      controller.abort(new Error('user cancelled'));
      await expect(pending).rejects.toThrow(/cancelled/);
      await expect.poll(() => probes.flatMap((p) => p.cancelled)).toContain('cancel-me');
      await expect.poll(() => events.map((e) => e.result.error?.code)).toContain('ABORTED');
      const next = await client.callTool({
        name: 'execute_code',
        arguments: { code: 'console.log("after")' },
      });
      expect(text(next)).toMatch(/^stdout:\nafter/);
    } finally {
      await close();
    }
  });

  it('bounds concurrent runs: past the queue, a run is refused with a clear busy result', async () => {
    const limiter = new RunLimiter({ maxConcurrent: 1, maxQueued: 0 });
    const { client, close } = await connect({ runLimiter: limiter });
    try {
      let started!: () => void;
      const running = new Promise<void>((resolve) => (started = resolve));
      const first = client.callTool(
        {
          name: 'execute_code',
          arguments: { code: `await tools.misc.slow({ ms: 400 }); console.log('first')` },
        },
        undefined,
        { onprogress: (p) => p.message === 'started' && started() },
      );
      await running;
      const second = await client.callTool({ name: 'execute_code', arguments: { code: 'console.log(2)' } });
      expect(second.isError).toBe(true);
      expect(text(second)).toMatch(/busy: 1 runs in flight[\s\S]*Nothing ran/);
      expect(text(await first)).toMatch(/^stdout:\nfirst/);
      expect(limiter.running).toBe(0);
    } finally {
      await close();
    }
  });

  it('an upstream list_changed updates search and notifies the client when the exposed list changes', async () => {
    const { client, close } = await connect();
    try {
      let notified = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        notified++;
      });
      const added = await client.callTool({
        name: 'misc__add_tool',
        arguments: { name: 'brand_new_widget', value: 'fresh' },
      });
      expect(added.isError).toBeFalsy();
      await expect.poll(() => notified).toBeGreaterThan(0);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).toContain('misc__brand_new_widget');
      const found = await client.callTool({ name: 'search_tools', arguments: { query: 'brand new widget' } });
      expect(text(found)).toMatch(/1\. misc\.brand_new_widget/);
      const called = await client.callTool({ name: 'misc__brand_new_widget', arguments: {} });
      expect(text(called)).toBe('fresh');
    } finally {
      await close();
    }
  });

  it('closing the server cancels its in-flight runs', async () => {
    const { client, server } = await connect();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const pending = client
      .callTool(
        {
          name: 'execute_code',
          arguments: { code: `await tools.misc.slow({ ms: 60000, label: 'server-closed' })` },
        },
        undefined,
        { onprogress: (p) => p.message === 'started' && started() },
      )
      .catch((error: unknown) => error);
    await running;
    const aborted = (): number => events.filter((e) => e.result.error?.code === 'ABORTED').length;
    const before = aborted();
    await server.close();
    expect(await pending).toBeInstanceOf(Error);
    await expect.poll(aborted).toBe(before + 1);
    await client.close();
  });
});
