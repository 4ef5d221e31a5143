/**
 * The tool pool against in-process MCP servers over the SDK's in-memory transport: catalog,
 * names, policy, validation, results, timeouts, cancellation, list_changed, partial failure.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { isCodecallError, type CodecallError } from '../../../src/errors.js';
import {
  createExpenseData,
  createExpenseServer,
  createMisbehavingServer,
  inMemoryTransport,
  type MisbehavingServerProbe,
} from '../../../src/testing/servers/index.js';
import { ToolPool, type CatalogTool, type ServerErrorEvent } from '../../../src/tools/index.js';
import { parseConfig } from '../../../src/config/index.js';

const pools: ToolPool[] = [];
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

async function openPool(
  options: { config?: Parameters<typeof parseConfig>[0]; onServerError?: (e: ServerErrorEvent) => void } = {},
): Promise<{ pool: ToolPool; probes: MisbehavingServerProbe[] }> {
  const probes: MisbehavingServerProbe[] = [];
  const config = parseConfig(options.config ?? {}, { file: '/project/codecall.json', env: {} });
  const pool = await ToolPool.open(config, {
    transports: {
      expenses: inMemoryTransport(() => createExpenseServer()),
      'odd-server': inMemoryTransport(() => {
        const { server, probe } = createMisbehavingServer();
        probes.push(probe);
        return server;
      }),
    },
    ...(options.onServerError ? { onServerError: options.onServerError } : {}),
  });
  pools.push(pool);
  return { pool, probes };
}

async function rejection(promise: Promise<unknown>): Promise<CodecallError> {
  try {
    await promise;
  } catch (error) {
    if (isCodecallError(error)) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

const code = { caller: 'code_execution' } as const;

describe('ToolPool catalog', () => {
  it('lists every tool with qualified, sandbox-safe names and resolved policy', async () => {
    const { pool } = await openPool();
    const byName = new Map(pool.catalog().map((t) => [t.name, t]));
    const members = byName.get('expenses.get_team_members')!;
    expect(members).toMatchObject({
      server: 'expenses',
      tool: 'get_team_members',
      namespace: 'expenses',
      member: 'get_team_members',
      allowedCallers: ['direct', 'code_execution'],
      allowedCallersSource: 'annotations',
      deferLoading: true,
    });
    expect(members.outputSchema).toBeDefined();
    expect(byName.get('expenses.delete_expense')!.allowedCallers).toEqual(['direct']);
    expect(byName.get('expenses.flag_expense')!.allowedCallersSource).toBe('default');
    const odd = byName.get('odd-server.echo')!;
    expect(odd.namespace).toBe('odd_server');
    expect(pool.get('odd_server.echo')).toBe(odd);
  });

  it('applies tool over server over annotation policy from the configuration', async () => {
    const { pool } = await openPool({
      config: {
        mcpServers: {
          expenses: {
            type: 'http',
            url: 'http://127.0.0.1:1/unused',
            allowedCallers: ['direct'],
            deferLoading: false,
            tools: {
              delete_expense: {
                allowedCallers: ['direct', 'code_execution'],
                inputExamples: [{ expense_id: 'exp-00001' }],
              },
            },
          },
        },
      },
    });
    const tool = (name: string): CatalogTool => pool.get(name)!;
    expect(tool('expenses.delete_expense')).toMatchObject({
      allowedCallers: ['direct', 'code_execution'],
      allowedCallersSource: 'tool',
      inputExamples: [{ expense_id: 'exp-00001' }],
      deferLoading: false,
      // Destructive and opened to code: calls wait for approval unless requireApproval says otherwise.
      requireApproval: true,
      requireApprovalSource: 'annotations',
    });
    expect(tool('expenses.get_team_members')).toMatchObject({
      allowedCallers: ['direct'],
      allowedCallersSource: 'server',
    });
    await expect(
      pool.call('expenses.delete_expense', { expense_id: 'exp-00001' }, { ...code, approver: () => true }),
    ).resolves.toEqual({ deleted: 'exp-00001' });
  });
});

describe('ToolPool.call', () => {
  it('returns structuredContent, parsed JSON text, plain text, and descriptors for binary content', async () => {
    const { pool } = await openPool();
    const data = createExpenseData();
    const members = (await pool.call('expenses.get_team_members', {}, code)) as { members: unknown[] };
    expect(members.members).toHaveLength(data.members.length);
    const page = (await pool.call('expenses.get_expenses', { quarter: 'Q3', category: 'travel' }, code)) as {
      items: { quarter: string; category: string }[];
      total: number;
    };
    expect(page.total).toBe(
      data.expenses.filter((e) => e.quarter === 'Q3' && e.category === 'travel').length,
    );
    expect(page.items.length).toBeGreaterThan(0);
    expect(page.items.every((i) => i.quarter === 'Q3' && i.category === 'travel')).toBe(true);
    expect(await pool.call('odd-server.structured', { n: 21 }, code)).toEqual({ n: 21, doubled: 42 });
    expect(await pool.call('odd-server.plain_text', {}, code)).toBe('hello, not json {');

    const image = (await pool.call('odd-server.image', { kb: 512 }, code)) as unknown[];
    expect(image).toEqual([
      { type: 'image', mimeType: 'image/png', bytes: 512 * 1024, note: 'image data omitted' },
      'a caption',
    ]);
    expect(JSON.stringify(image).length).toBeLessThan(200);
    expect(await pool.call('odd-server.resources', {}, code)).toEqual([
      { type: 'resource', uri: 'file:///notes.txt', mimeType: 'text/plain', text: 'some notes' },
      {
        type: 'resource',
        uri: 'file:///blob.bin',
        mimeType: 'application/octet-stream',
        bytes: 4,
        note: 'binary resource data omitted',
      },
      { type: 'resource_link', uri: 'file:///big.csv', name: 'big.csv', mimeType: 'text/csv' },
    ]);
  });

  it('refuses a tool not opened to code, naming the tool and the config key', async () => {
    const { pool } = await openPool();
    const error = await rejection(pool.call('expenses.delete_expense', { expense_id: 'exp-00001' }, code));
    expect(error.code).toBe('TOOL_NOT_ALLOWED');
    expect(error.message).toContain('expenses.delete_expense');
    expect(error.message).toContain('mcpServers.expenses.tools.delete_expense.allowedCallers');
    // The message reaches scripts and clients: the config key, never the host path of the file.
    expect(error.message).not.toContain('/project');
    // The model may still call it directly, once approved (destructive: approval by default).
    const unapproved = await rejection(
      pool.call('expenses.delete_expense', { expense_id: 'exp-00001' }, { caller: 'direct' }),
    );
    expect(unapproved.code).toBe('APPROVAL_DENIED');
    await expect(
      pool.call(
        'expenses.delete_expense',
        { expense_id: 'exp-00001' },
        { caller: 'direct', approver: () => true },
      ),
    ).resolves.toEqual({ deleted: 'exp-00001' });
  });

  it('validates arguments before dispatch, naming the field and what was expected', async () => {
    const { pool } = await openPool();
    const badEnum = await rejection(pool.call('expenses.get_expenses', { quarter: 'Q5' }, code));
    expect(badEnum.code).toBe('TOOL_INPUT_INVALID');
    expect(badEnum.message).toContain('"quarter" must be one of "Q1", "Q2", "Q3", "Q4"');
    const missing = await rejection(pool.call('expenses.get_budget_by_level', { quarter: 'Q3' }, code));
    expect(missing.message).toContain('missing required field "level"');
    const wrongType = await rejection(pool.call('odd-server.echo', { text: 5 }, code));
    expect(wrongType.message).toContain('"text" must be string');
    const notObject = await rejection(pool.call('odd-server.echo', [1, 2], code));
    expect(notObject.message).toContain('arguments must be an object');
  });

  it('turns isError and handler exceptions into TOOL_CALL_FAILED with the server message', async () => {
    const { pool } = await openPool();
    const failed = await rejection(
      pool.call('odd-server.fail', { message: 'quota exceeded for user 7' }, code),
    );
    expect(failed.code).toBe('TOOL_CALL_FAILED');
    expect(failed.message).toContain('odd-server.fail');
    expect(failed.message).toContain('quota exceeded for user 7');
    const thrown = await rejection(pool.call('odd-server.throws', {}, code));
    expect(thrown.message).toContain('handler exploded');
  });

  it('says an upstream protocol error with one "MCP error" prefix, not the SDK\'s doubled one', async () => {
    // A low-level SDK server: its McpError's text already carries the prefix on the wire.
    const strict = (): Server => {
      const server = new Server({ name: 'strict', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{ name: 'picky', description: 'Refuses every call.', inputSchema: { type: 'object' } }],
      }));
      server.setRequestHandler(CallToolRequestSchema, () => {
        throw new McpError(ErrorCode.InvalidParams, 'cursor is stale; list again');
      });
      return server;
    };
    const pool = await ToolPool.open({}, { transports: { strict: inMemoryTransport(strict) } });
    pools.push(pool);
    const error = await rejection(pool.call('strict.picky', {}, code));
    expect(error.code).toBe('TOOL_CALL_FAILED');
    expect(error.message).toBe('strict.picky failed: MCP error -32602: cursor is stale; list again');
  });

  it('suggests the closest tool for an unknown name', async () => {
    const { pool } = await openPool();
    const error = await rejection(pool.call('expenses.get_expense', {}, code));
    expect(error.code).toBe('TOOL_NOT_FOUND');
    expect(error.message).toContain('Did you mean "expenses.get_expenses"?');
  });

  it('times out a slow call and sends notifications/cancelled', async () => {
    const { pool, probes } = await openPool();
    const error = await rejection(
      pool.call('odd-server.slow', { ms: 30_000, label: 'timeout' }, { ...code, timeoutMs: 100 }),
    );
    expect(error.code).toBe('TOOL_TIMEOUT');
    expect(error.message).toContain('100 ms');
    await expect.poll(() => probes[0]!.cancelled).toContain('timeout');
  });

  it('cancels a call when its signal aborts', async () => {
    const { pool, probes } = await openPool();
    const controller = new AbortController();
    const pending = rejection(
      pool.call('odd-server.slow', { ms: 30_000, label: 'aborted' }, { ...code, signal: controller.signal }),
    );
    await expect.poll(() => probes[0]!.started, { timeout: 10_000 }).toContain('aborted');
    controller.abort(new Error('run ended'));
    const error = await pending;
    expect(error.code).toBe('ABORTED');
    expect(error.message).toContain('run ended');
    await expect.poll(() => probes[0]!.cancelled).toContain('aborted');
    // The same signal, already aborted, fails fast without dispatching.
    const again = await rejection(
      pool.call('odd-server.slow', { ms: 1, label: 'never' }, { ...code, signal: controller.signal }),
    );
    expect(again.code).toBe('ABORTED');
    expect(probes[0]!.completed).not.toContain('never');
  });

  it('follows tools/list_changed: the catalog updates and the new tool can be called', async () => {
    const { pool } = await openPool();
    const changes: (readonly CatalogTool[])[] = [];
    const stop = pool.onCatalogChange((catalog) => changes.push(catalog));
    expect(pool.get('odd-server.added_later')).toBeUndefined();
    await pool.call('odd-server.add_tool', { name: 'added_later', value: 'hello' }, code);
    await expect.poll(() => changes.length).toBeGreaterThan(0);
    expect(changes.at(-1)!.some((t) => t.name === 'odd-server.added_later')).toBe(true);
    expect(await pool.call('odd-server.added_later', {}, code)).toBe('hello');
    stop();
  });
});

describe('ToolPool lifecycle', () => {
  it('keeps working when one server fails to start, and reports it', async () => {
    const events: ServerErrorEvent[] = [];
    const pool = await ToolPool.open(
      {},
      {
        transports: {
          expenses: inMemoryTransport(() => createExpenseServer()),
          broken: () => {
            throw new Error('cannot reach the broken server');
          },
        },
        onServerError: (event) => events.push(event),
      },
    );
    pools.push(pool);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ server: 'broken', phase: 'connect' });
    expect(events[0]!.error.code).toBe('SERVER_START_FAILED');
    const status = pool.serverStatus();
    expect(status.find((s) => s.name === 'broken')).toMatchObject({ state: 'failed' });
    expect(status.find((s) => s.name === 'broken')!.error).toContain('cannot reach the broken server');
    expect(status.find((s) => s.name === 'expenses')).toMatchObject({ state: 'connected', toolCount: 5 });
    expect(
      await pool.call('expenses.get_budget_by_level', { level: 'L1', quarter: 'Q1' }, code),
    ).toMatchObject({
      level: 'L1',
    });
    const unavailable = await rejection(pool.call('broken.anything', {}, code));
    expect(unavailable.code).toBe('SERVER_UNAVAILABLE');
  });

  it('with background, resolves before any server connected; servers join the catalog as they connect', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const expenses = inMemoryTransport(() => createExpenseServer());
    const errors: ServerErrorEvent[] = [];
    const pool = await ToolPool.open(
      {},
      {
        background: true,
        transports: {
          // Starts only when the test opens the gate.
          expenses: async () => {
            await gate;
            return expenses();
          },
          broken: () => Promise.reject(new Error('cannot reach the broken server')),
        },
        onServerError: (event) => errors.push(event),
      },
    );
    pools.push(pool);
    expect(pool.catalog()).toEqual([]);
    expect(pool.serverStatus().find((s) => s.name === 'expenses')?.state).toBe('connecting');
    const joined = new Promise<readonly CatalogTool[]>((resolve) => pool.onCatalogChange(resolve));
    open();
    expect((await joined).map((t) => t.name)).toContain('expenses.get_team_members');
    await pool.started();
    const broken = pool.serverStatus().find((s) => s.name === 'broken')!;
    expect(broken.state).toBe('failed');
    // A custom transport's reason is not classified as a stdio one.
    expect(broken.publicReason).toBe('it could not be reached');
    expect(errors.map((e) => [e.server, e.phase])).toEqual([['broken', 'connect']]);
    expect(
      await pool.call('expenses.get_budget_by_level', { level: 'L1', quarter: 'Q1' }, code),
    ).toMatchObject({
      level: 'L1',
    });
    await expect(ToolPool.open({}, { background: true, requireAll: true })).rejects.toThrow(
      /"background" and "requireAll" exclude each other/,
    );
  });

  it('throws SERVER_START_FAILED with requireAll', async () => {
    const error = await rejection(
      ToolPool.open(
        {},
        {
          requireAll: true,
          transports: {
            expenses: inMemoryTransport(() => createExpenseServer()),
            broken: () => Promise.reject(new Error('nope')),
          },
        },
      ),
    );
    expect(error.code).toBe('SERVER_START_FAILED');
    expect(error.message).toContain('"broken"');
  });

  it('closes idempotently and refuses calls afterwards', async () => {
    const { pool } = await openPool();
    await Promise.all([pool.close(), pool.close()]);
    await pool[Symbol.asyncDispose]();
    const error = await rejection(pool.call('expenses.get_team_members', {}, code));
    expect(error.code).toBe('CLOSED');
    expect(pool.serverStatus().length).toBeGreaterThan(0);
    expect(pool.serverStatus().every((s) => s.state === 'closed')).toBe(true);
  });
});
