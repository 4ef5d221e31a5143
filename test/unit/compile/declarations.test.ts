/**
 * renderDeclarations: JSON Schema → TypeScript, checked with the real TypeScript compiler.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderDeclarations, type DeclarableTool } from '../../../src/compile/index.js';
import { WorkerModule } from '../../fixtures/worker-watchdog.js';
import { createExpenseServer, inMemoryTransport } from '../../../src/testing/servers/index.js';
import { assignIdentifiers, ToolPool } from '../../../src/tools/index.js';

const CATALOG = resolve(import.meta.dirname, '../../../../shared/data/mcp-catalog/tools.jsonl');

const FIXTURE = resolve(import.meta.dirname, '../../fixtures/mcp-catalog/tools.jsonl');

interface CatalogRow {
  name: string;
  server: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
}

/** Rows of a catalog file (`tools.jsonl`: one `{ name: "server::tool", server, … }` a line). */
function readCatalog(file: string): CatalogRow[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as CatalogRow);
}

/** The catalog's tools with sandbox identifiers, as the tool pool assigns them. */
function declarableTools(rows: CatalogRow[]): DeclarableTool[] {
  const namespaces = assignIdentifiers(rows.map((r) => r.server));
  const byServer = new Map<string, CatalogRow[]>();
  for (const row of rows) byServer.set(row.server, [...(byServer.get(row.server) ?? []), row]);
  const tools: DeclarableTool[] = [];
  for (const [server, list] of byServer) {
    const toolName = (r: { name: string }): string => r.name.slice(r.name.indexOf('::') + 2);
    const members = assignIdentifiers(list.map(toolName));
    for (const row of list) {
      tools.push({
        name: `${server}.${toolName(row)}`,
        namespace: namespaces.get(server)!,
        member: members.get(toolName(row))!,
        ...(row.description !== undefined ? { description: row.description } : {}),
        ...(row.inputSchema !== undefined ? { inputSchema: row.inputSchema } : {}),
      });
    }
  }
  return tools;
}

/** Type-checks `declarations` (a global .d.ts) plus an optional module using it; returns the errors. */
function typecheck(declarations: string, usage = 'export {};'): string[] {
  const files = new Map([
    ['/virtual/tools.d.ts', declarations],
    ['/virtual/usage.ts', usage],
  ]);
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts'],
    types: [],
    skipLibCheck: false,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, onError) => {
    const text = files.get(name);
    return text !== undefined
      ? ts.createSourceFile(name, text, language)
      : getSourceFile(name, language, onError);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => files.has(name) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files.get(name) ?? readFile(name);
  const program = ts.createProgram({ rootNames: [...files.keys()], options, host });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : undefined;
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    const line = where && d.file ? d.file.text.split('\n')[where.line] : '';
    return `${d.file?.fileName ?? ''}:${where ? where.line + 1 : 0}: ${text}\n    ${line?.trim()}`;
  });
}

function tool(
  member: string,
  inputSchema?: Record<string, unknown>,
  extra: Partial<DeclarableTool> = {},
): DeclarableTool {
  return {
    name: `demo.${member}`,
    namespace: 'demo',
    member,
    ...(inputSchema ? { inputSchema } : {}),
    ...extra,
  };
}

describe('renderDeclarations', () => {
  it('renders the expense server catalog: typed args, JSDoc, examples, output types, callTool', async () => {
    await using pool = await ToolPool.open(
      {},
      { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
    );
    const catalog = pool
      .catalog()
      .map((t) =>
        t.tool === 'get_expenses' ? { ...t, inputExamples: [{ member_id: 'emp-007', quarter: 'Q3' }] } : t,
      );
    const text = renderDeclarations(catalog);
    expect(text).toContain('declare const tools: {');
    expect(text).toContain('get_expenses(args?: {');
    expect(text).toContain('quarter?: "Q1" | "Q2" | "Q3" | "Q4";');
    expect(text).toContain("Only this member's expenses");
    expect(text).toContain('@example');
    expect(text).toContain('await tools.expenses.get_expenses({"member_id":"emp-007","quarter":"Q3"});');
    expect(text).toContain('get_budget_by_level(args: {');
    const usage = `
      const budget = await tools.expenses.get_budget_by_level({ level: 'L3', quarter: 'Q3' });
      const travel: number = budget.budgets.travel;
      const page = await callTool('expenses.get_expenses', { member_id: 'emp-001', category: 'travel' });
      const members = await tools.expenses.get_team_members();
      const first: string | undefined = members.members[0]?.name;
      // @ts-expect-error quarter must be Q1–Q4
      await tools.expenses.get_expenses({ quarter: 'Q5' });
      // @ts-expect-error level is required
      await tools.expenses.get_budget_by_level({ quarter: 'Q1' });
      // @ts-expect-error unknown tool
      await callTool('expenses.nope', {});
      export { travel, page, first };
    `;
    expect(typecheck(text, usage)).toEqual([]);
  });

  it('handles $ref/$defs (recursive too), root recursion, unions, enums, tuples and additionalProperties', () => {
    const tree = {
      type: 'object',
      properties: { root: { $ref: '#/$defs/Node' }, parent: { $ref: '#' } },
      required: ['root'],
      $defs: {
        Node: {
          type: 'object',
          properties: {
            label: { type: 'string', description: 'Shown in the UI */ not a comment end' },
            children: { type: 'array', items: { $ref: '#/$defs/Node' } },
            meta: { $ref: '#/definitions/Meta' },
          },
          required: ['label'],
        },
        Loop: { $ref: '#/$defs/Loop' },
      },
      definitions: { Meta: { type: 'object', additionalProperties: { type: 'number' } } },
    };
    const varied = {
      type: 'object',
      properties: {
        mode: { enum: ['a', 'b', 1, null] },
        either: { anyOf: [{ type: 'string' }, { type: 'integer' }] },
        maybe: { type: ['string', 'null'] },
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] },
        prefixed: { type: 'array', prefixItems: [{ type: 'boolean' }], items: false },
        both: {
          allOf: [
            { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
            { required: ['x'] },
          ],
        },
        open: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: true },
        closed: { type: 'object', properties: {}, additionalProperties: false },
        legacy: { type: 'string', nullable: true },
        konst: { const: 'fixed' },
        'weird-key': { type: 'string' },
        __proto__x: { type: 'number' },
        nothing: {},
        never: false,
        objectNoType: { properties: { n: { type: 'number' } } },
        external: { $ref: 'https://example.com/schema.json' },
        oneOfObjects: {
          type: 'object',
          oneOf: [
            { properties: { kind: { const: 'a' }, a: { type: 'string' } }, required: ['kind'] },
            { properties: { kind: { const: 'b' }, b: { type: 'number' } }, required: ['kind'] },
          ],
        },
      },
      required: ['mode'],
      additionalProperties: false,
    };
    const text = renderDeclarations([
      tool('tree', tree, { description: 'A recursive tree.' }),
      tool('varied', varied),
      tool('no_schema'),
      tool(
        'output',
        { type: 'object' },
        {
          outputSchema: {
            type: 'object',
            properties: { rows: { type: 'array', items: { $ref: '#/$defs/Row' } } },
            $defs: { Row: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } },
          },
        },
      ),
    ]);
    expect(text).toContain('declare namespace ToolTypes');
    expect(text).toContain('type Node = {');
    expect(text).toContain('*\\/ not a comment end');
    const usage = `
      await tools.demo.tree({ root: { label: 'a', children: [{ label: 'b', children: [] }], meta: { x: 1 } }, parent: { root: { label: 'c' } } });
      // @ts-expect-error children must be nodes
      await tools.demo.tree({ root: { label: 'a', children: [1] } });
      await tools.demo.varied({ mode: null, either: 3, maybe: null, pair: ['a', 1], prefixed: [true], both: { x: 1 }, open: { a: 'x', b: 2 }, legacy: null, konst: 'fixed', 'weird-key': 'ok', oneOfObjects: { kind: 'b', b: 2 } });
      // @ts-expect-error mode is not in the enum
      await tools.demo.varied({ mode: 'c' });
      // @ts-expect-error konst is a literal
      await tools.demo.varied({ mode: 'a', konst: 'other' });
      await tools.demo.no_schema({ anything: 1 });
      const out = await tools.demo.output();
      const id: string | undefined = out.rows?.[0]?.id;
      export { id };
    `;
    expect(typecheck(text, usage)).toEqual([]);
  });

  it('shows the MCP name when the sandbox name differs, and quotes what is not an identifier', () => {
    const text = renderDeclarations([
      { name: 'my-server.get-data', namespace: 'my_server', member: 'get_data', description: 'Gets data.' },
    ]);
    expect(text).toContain('MCP tool: my-server.get-data');
    expect(text).toContain('"my-server.get-data": typeof tools.my_server.get_data;');
    expect(typecheck(text, "await callTool('my-server.get-data', {}); export {};")).toEqual([]);
  });

  it('renders an excerpt of a real catalog, covering every schema construct in it, into declarations that compile', () => {
    // test/fixtures/mcp-catalog: 11 tools of LiveMCPBench's catalog (Apache-2.0) picked by
    // derive.mjs to cover every construct, name shape and description hazard of its 527 tools.
    const rows = readCatalog(FIXTURE);
    expect(rows.length).toBe(11);
    const tools = declarableTools(rows);
    const text = renderDeclarations(tools);
    // Tool signatures only (4 spaces in; the ResultHandle interface's methods are 2 in).
    expect(text.match(/^ {4}\S.*\): Promise</gm)?.length).toBe(tools.length);
    expect(typecheck(text)).toEqual([]);
  });

  it('renders every tool of the 500+ tool real catalog (../shared/data, when present) into declarations that compile', (context) => {
    if (!existsSync(CATALOG)) {
      context.skip(`catalog not found at ${CATALOG}; the excerpt test above covers its constructs`);
      return;
    }
    const rows = readCatalog(CATALOG);
    expect(rows.length).toBeGreaterThan(500);
    const tools = declarableTools(rows);
    const text = renderDeclarations(tools);
    // Tool signatures only (4 spaces in; the ResultHandle interface's methods are 2 in).
    expect(text.match(/^ {4}\S.*\): Promise</gm)?.length).toBe(tools.length);
    expect(typecheck(text)).toEqual([]);
  });
});

/** A 2 KB schema whose properties `$ref` each other as a DAG: each level names the one below twice. */
function refDag(levels: number): Record<string, unknown> {
  const properties: Record<string, unknown> = { p0: { type: 'string', description: 'a leaf' } };
  for (let i = 1; i <= levels; i++) {
    properties[`p${i}`] = {
      type: 'object',
      properties: { left: { $ref: `#/properties/p${i - 1}` }, right: { $ref: `#/properties/p${i - 1}` } },
    };
  }
  return { type: 'object', properties };
}

describe('renderDeclarations on hostile schemas', () => {
  // Hostile schemas render on a worker thread: an expansion that never ends (2^40 paths) fails
  // its test after DEFAULT_WORKER_CALL_TIMEOUT_MS instead of hanging the file.
  let declarations: WorkerModule;
  beforeAll(async () => {
    declarations = await WorkerModule.open(new URL('../../../src/compile/declarations.ts', import.meta.url));
  }, 60_000);
  afterAll(() => declarations?.close());
  const render = (tools: DeclarableTool[], options?: { maxBytes: number }): Promise<string> =>
    declarations.call<string>('renderDeclarations', options === undefined ? [tools] : [tools, options]);

  it('renders a $ref DAG once per pointer, by name; the result type-checks', async () => {
    const schema = refDag(40);
    expect(JSON.stringify(schema).length).toBeLessThan(5_000);
    const text = await render([{ name: 'h.dag', namespace: 'h', member: 'dag', inputSchema: schema }]);
    expect(text.length).toBeLessThan(20_000);
    expect(text).toContain('type p39 = {');
    expect(text).toMatch(/p40\?: \{\n\s+left\?: ToolTypes\.h\.dag\.input\.p39;/);
    expect(text).not.toContain('Declarations cut');
    const usage = "await tools.h.dag({ p2: { left: { left: 'x' }, right: { right: 'y' } } }); export {};";
    expect(typecheck(text, usage)).toEqual([]);
  });

  it('bounds the total text with a visible marker; the tools stay declared and callable', async () => {
    // anyOf alternatives each repeat the shared properties: 3^8 copies without a bound.
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 8; i++) {
      schema = {
        type: 'object',
        properties: { [`level${i}_${'x'.repeat(20)}`]: schema },
        anyOf: ['a', 'b', 'c'].map((key) => ({ properties: { [key]: { type: 'number' } } })),
      };
    }
    const tools = [
      { name: 'h.wide', namespace: 'h', member: 'wide', inputSchema: schema },
      {
        name: 'h.small',
        namespace: 'h',
        member: 'small',
        inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
      },
    ];
    const text = await render(tools, { maxBytes: 20_000 });
    expect(text.length).toBeLessThan(40_000);
    expect(text).toMatch(/^\/\* Declarations cut at about 20000 characters of types/);
    expect(text).toContain('wide(args?:');
    expect(text).toContain('small(args?:');
    expect(typecheck(text, 'await tools.h.small({}); await callTool("h.wide", {}); export {};')).toEqual([]);
    // Unbounded, the same schema renders far past the cut.
    expect((await render(tools, { maxBytes: 1e12 })).length).toBeGreaterThan(200_000);
  });

  it('renders a schema object once: a later search returning the same tool does not walk its schema again', () => {
    let reads = 0;
    const counted = <T extends object>(value: T): T =>
      new Proxy(value, {
        get(target, key, receiver) {
          reads++;
          const inner = Reflect.get(target, key, receiver) as unknown;
          return typeof inner === 'object' && inner !== null ? counted(inner) : inner;
        },
      });
    const schema = counted({
      type: 'object',
      properties: { a: { $ref: '#/$defs/node' }, b: { $ref: '#/$defs/node' } },
      $defs: { node: { type: 'object', properties: { id: { type: 'string' } } } },
    });
    const tools = [{ name: 'g.walk', namespace: 'g', member: 'walk', inputSchema: schema }];
    const first = renderDeclarations(tools);
    expect(reads).toBeGreaterThan(0);
    reads = 0;
    expect(renderDeclarations(tools)).toBe(first);
    // Only `required` (whether the arguments are optional), outside the schema's rendering.
    expect(reads).toBe(1);
  });

  it('never serves a kept rendering where less budget is left than it was made with', () => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < 6; i++) {
      schema = {
        type: 'object',
        properties: { [`level${i}_${'x'.repeat(20)}`]: schema },
        anyOf: ['a', 'b', 'c'].map((key) => ({ properties: { [key]: { type: 'number' } } })),
      };
    }
    const tools = [{ name: 'h.wide', namespace: 'h', member: 'wide', inputSchema: schema }];
    const full = renderDeclarations(tools, { maxBytes: 1e12 });
    const cut = renderDeclarations(tools, { maxBytes: 2_000 });
    expect(cut).toMatch(/^\/\* Declarations cut at about 2000 characters of types/);
    expect(cut.length).toBeLessThan(full.length);
    expect(renderDeclarations(tools, { maxBytes: 1e12 })).toBe(full);
  });
});
