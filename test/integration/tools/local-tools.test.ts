/**
 * Local tools (`defineTool` + `localTools`) beside the example expense server: in the catalog
 * and search, callable from code and directly, validated on the host like MCP tools, their
 * failures readable, their calls recorded like any other.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CodecallError } from '../../../src/errors.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { defineTool, localTools } from '../../../src/tools/index.js';

const CONFIG = resolve(import.meta.dirname, '../../../examples/codecall.json');
const RATES: Record<string, number> = { USD: 1, EUR: 0.5 };
const seen: unknown[] = [];

const convert = defineTool({
  name: 'convert_currency',
  description: 'Convert an amount of money from one currency to another at a fixed rate.',
  inputSchema: z.object({ amount: z.number(), from: z.enum(['USD', 'EUR']), to: z.enum(['USD', 'EUR']) }),
  execute: ({ amount, from, to }) => {
    seen.push({ amount, from, to });
    return { amount: (amount / RATES[from]!) * RATES[to]!, currency: to };
  },
});
const fail = defineTool({
  name: 'always_fails',
  description: 'A tool that fails, to show how failures read.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  execute: () => {
    throw new Error('the ledger is locked');
  },
});

let runtime: CodecallRuntime;
beforeAll(async () => {
  runtime = await CodecallRuntime.open({
    load: { path: CONFIG },
    history: false,
    tools: { transports: { finance: localTools([convert, fail]) } },
  });
});
afterAll(async () => {
  await runtime.close();
});

describe('local tools', () => {
  it('join the catalog and search beside MCP tools, with their JSON Schema', () => {
    const tool = runtime.catalog().find((t) => t.name === 'finance.convert_currency');
    expect(tool).toBeDefined();
    expect(tool!.inputSchema).toMatchObject({
      type: 'object',
      properties: { amount: { type: 'number' }, from: { enum: ['USD', 'EUR'] } },
      required: ['amount', 'from', 'to'],
    });
    expect(tool!.allowedCallers).toContain('code_execution');
    const found = runtime.searchTools('convert currency amount');
    expect(found.hits[0]?.tool.name).toBe('finance.convert_currency');
    expect(found.declarations).toContain('convert_currency');
  });

  it('are called from code with MCP tools in one script, and directly', async () => {
    const result = await runtime.execute(
      'const { members } = await tools.expenses.get_team_members();\n' +
        'const eur = await tools.finance.convert_currency({ amount: members.length * 10, from: "USD", to: "EUR" });\n' +
        'console.log(eur.amount, eur.currency);',
    );
    expect(result.status).toBe('ok');
    expect(result.stdout).toBe('100 EUR\n');
    expect(result.toolCalls.map((call) => [call.tool, call.ok])).toEqual([
      ['expenses.get_team_members', true],
      ['finance.convert_currency', true],
    ]);
    const direct = await runtime.callTool('finance.convert_currency', { amount: 3, from: 'EUR', to: 'USD' });
    expect(direct).toEqual({ amount: 6, currency: 'USD' });
  });

  it('bad arguments are refused on the host before the function runs; a throw is an error the script reads', async () => {
    const before = seen.length;
    const bad = await runtime.execute(
      'await tools.finance.convert_currency({ amount: "ten", from: "USD", to: "EUR" });',
    );
    expect(bad.status).toBe('error');
    expect(bad.error?.message).toMatch(/amount/);
    expect(seen.length).toBe(before);

    const failed = await runtime.execute(
      'try { await tools.finance.always_fails({}); } catch (error) { console.log("caught:", error.message); }',
    );
    expect(failed.stdout).toMatch(/^caught: .*the ledger is locked/);
    expect(failed.toolCalls).toEqual([expect.objectContaining({ tool: 'finance.always_fails', ok: false })]);
  });

  it('defineTool refuses a bad definition, naming the field', () => {
    const attempt = (definition: unknown): unknown => {
      try {
        return defineTool(definition as never);
      } catch (error) {
        return error;
      }
    };
    const badName = attempt({
      name: 'has space',
      description: 'x',
      inputSchema: { type: 'object' },
      execute: () => 1,
    });
    expect(CodecallError.isInstance(badName, 'INVALID_ARGUMENT') && badName.details.field).toBe('name');
    expect(
      attempt({ name: 'ok', description: 'x', inputSchema: { type: 'string' }, execute: () => 1 }),
    ).toMatchObject({
      message: expect.stringMatching(/inputSchema must be an object schema/),
    });
    expect(() => localTools([convert, convert])).toThrow(/Two local tools are named "convert_currency"/);
  });
});
