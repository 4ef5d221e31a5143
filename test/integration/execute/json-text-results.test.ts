/**
 * Tool results as a script receives them, through a real MCP server over stdio
 * (test/fixtures/servers/text-results-server.mjs) and a local tool, in both sandbox modes. A
 * JSON text result is passed to the sandbox as the server's text and parsed there once: the host
 * neither parses it nor serialises it again. That shows where JSON cannot round-trip (1e400 is
 * Infinity, -0 stays -0: a host parse + JSON.stringify would give null and 0) and in the bytes
 * counted (the server's text, white space included).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallRuntime, type ToolResultEvent } from '../../../src/execute/index.js';
import { MemoryRunJournal } from '../../../src/store/index.js';
import type { SandboxMode } from '../../../src/isolate/index.js';
import { defineTool, localTools } from '../../../src/tools/index.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const SERVER = join(ROOT, 'test', 'fixtures', 'servers', 'text-results-server.mjs');
/** The text `json_object` returns, byte for byte. */
const JSON_OBJECT_TEXT = '{ "rows" : [1, 2, 3],\n  "name" : "a" }';

const rowsTool = defineTool({
  name: 'rows',
  description: 'Returns rows as a plain value.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  execute: () => [{ id: 1 }, { id: 2, tags: ['x'] }],
});
const recordTool = defineTool({
  name: 'record',
  description: 'Returns an object as a plain value.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  execute: () => ({ total: 3, nested: { ok: true } }),
});

const dir = mkdtempSync(join(tmpdir(), 'codecall-json-text-'));
const runtimes = new Map<SandboxMode, CodecallRuntime>();

beforeAll(async () => {
  for (const mode of ['in-process', 'process'] as const) {
    const config = join(dir, `${mode}.json`);
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { r: { command: process.execPath, args: [SERVER] } },
        sandbox: { mode, workers: 1 },
      }),
    );
    runtimes.set(
      mode,
      await CodecallRuntime.open({
        load: { path: config },
        history: false,
        tools: { transports: { local: localTools([rowsTool, recordTool]) } },
      }),
    );
  }
}, 60_000);

afterAll(async () => {
  for (const runtime of runtimes.values()) await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

describe.each(['in-process', 'process'] as const)('tool results in a script (%s)', (mode) => {
  const runtime = (): CodecallRuntime => runtimes.get(mode)!;

  it('each kind of result reaches the script as before', async () => {
    const result = await runtime().execute(`
      const show = async (name, call) => {
        const value = await call();
        console.log(name, typeof value, JSON.stringify(value));
      };
      await show('json_object', () => tools.r.json_object());
      await show('json_array', () => tools.r.json_array());
      await show('not_json', () => tools.r.not_json());
      await show('plain', () => tools.r.plain());
      await show('number_text', () => tools.r.number_text());
      await show('image', () => tools.r.image());
      await show('mixed', () => tools.r.mixed());
      await show('structured', () => tools.r.structured());
      await show('local_rows', () => tools.local.rows());
      await show('local_record', () => tools.local.record());
    `);
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    expect(result.stdout.trim().split('\n')).toEqual([
      'json_object object {"rows":[1,2,3],"name":"a"}',
      'json_array object [{"id":1},{"id":2}]',
      'not_json string "{broken: yes"',
      'plain string "hello, not JSON"',
      'number_text string "42"',
      'image object {"type":"image","bytes":30,"note":"image data omitted","mimeType":"image/png"}',
      'mixed object [{"a":1},{"type":"image","bytes":30,"note":"image data omitted","mimeType":"image/png"}]',
      'structured object {"from":"structuredContent"}',
      'local_rows object [{"id":1},{"id":2,"tags":["x"]}]',
      'local_record object {"total":3,"nested":{"ok":true}}',
    ]);
  });

  it('a JSON text is parsed once, in the sandbox: values JSON cannot write back arrive intact', async () => {
    const result = await runtime().execute(`
      const v = await tools.r.unwritable();
      console.log(v.inf === Infinity, Object.is(v.neg, -0), Object.getPrototypeOf(v) === Object.prototype,
        v.polluted === undefined, ({}).polluted === undefined, Object.keys(v).join());
    `);
    expect(result.status, JSON.stringify(result.error)).toBe('ok');
    // A host parse + JSON.stringify would give `null` and `0`: "false false …".
    expect(result.stdout.trim()).toBe('true true true true true inf,neg,__proto__');
  });

  it("counts the server's text bytes against the result limits", async () => {
    const bytes = Buffer.byteLength(JSON_OBJECT_TEXT);
    const ok = await runtime().execute('console.log((await tools.r.json_object()).rows.length);', {
      limits: { maxToolResultBytes: bytes },
    });
    expect(ok.status, JSON.stringify(ok.error)).toBe('ok');
    expect(ok.stdout.trim()).toBe('3');
    expect(ok.toolCalls.map((call) => call.resultBytes)).toEqual([bytes]);
    expect(ok.stats.toolResultBytes).toBe(bytes);

    const over = await runtime().execute('await tools.r.json_object();', {
      limits: { maxToolResultBytes: bytes - 1 },
    });
    expect(over.error?.code).toBe('TOOL_RESULT_LIMIT');
    expect(over.error?.message).toContain(`is ${bytes} bytes of JSON`);

    const total = await runtime().execute(
      'await tools.r.json_object(); console.log("first"); await tools.r.json_object();',
      { limits: { maxTotalToolResultBytes: 2 * bytes - 1 } },
    );
    expect(total.stdout.trim()).toBe('first');
    expect(total.error?.code).toBe('TOOL_RESULT_LIMIT');
    expect(total.error?.message).toContain(
      `exceed ${2 * bytes - 1} bytes in total (${bytes} received so far)`,
    );
  });

  it('host consumers still get values: onToolResult, and the journal (whose replay agrees)', async () => {
    const events: ToolResultEvent[] = [];
    const observed = await runtime().execute('console.log((await tools.r.json_object()).name);', {
      onToolResult: (event) => events.push(event),
    });
    expect(observed.stdout.trim()).toBe('a');
    expect(events.map((event) => [event.name, event.ok, event.result])).toEqual([
      ['r.json_object', true, { rows: [1, 2, 3], name: 'a' }],
    ]);

    // The journal stores values, so a live run sees what its replay will: JSON's 1e400 → null.
    const journal = new MemoryRunJournal();
    const script = 'const v = await tools.r.unwritable(); console.log(v.inf, Object.is(v.neg, -0));';
    const live = await runtime().execute(script, { journal });
    expect(live.stdout.trim()).toBe('null false');
    const replayed = await runtime().execute(script, { journal, replay: true });
    expect(replayed.stdout.trim()).toBe('null false');
  });
});
