/**
 * Human output of `exec`, `tools` and `search` never sends control sequences that a script or an
 * MCP server supplied (clear screen, window title, OSC 52 clipboard write): they are shown as
 * visible stand-ins. `--json` stays exact. Runs the CLI's `main` in-process against a real stdio
 * MCP server whose name, tool description and stderr carry escape sequences.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { neutralizeControls } from '../../../src/cli/terminal-text.js';
import { SqliteHistoryStore } from '../../../src/store/sqlite-history-store.js';
import { tempDir } from '../../fixtures/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const SDK = join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');
const ESC = '\u001b';
const BEL = '\u0007';
/** Clipboard write, window title, clear screen, a C1 CSI. */
const HOSTILE = `${ESC}]52;c;cHduZWQ=${BEL}${ESC}]0;pwned${BEL}${ESC}[2J\u009b31m`;

function hostileServer(dir: string): string {
  const file = join(dir, 'hostile-server.mjs');
  writeFileSync(
    file,
    `import { Server } from ${JSON.stringify(pathToFileURL(join(SDK, 'server', 'index.js')).href)};
import { StdioServerTransport } from ${JSON.stringify(pathToFileURL(join(SDK, 'server', 'stdio.js')).href)};
import { ListToolsRequestSchema, CallToolRequestSchema } from ${JSON.stringify(pathToFileURL(join(SDK, 'types.js')).href)};
const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [{ name: 'lookup_weather', description: ${JSON.stringify(`Weather lookup ${HOSTILE} forecast`)}, inputSchema: { type: 'object' } }],
}));
server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: 'sunny' }] }));
await server.connect(new StdioServerTransport());
`,
  );
  return file;
}

function tempProject(): { dir: string; config: string } {
  const dir = tempDir('codecall-tty-');
  const config = join(dir, 'codecall.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        weather: { command: process.execPath, args: [hostileServer(dir)] },
        // Fails at once, printing escape sequences on its stderr.
        [`bad${ESC}[2J`]: {
          command: process.execPath,
          args: ['-e', `process.stderr.write(${JSON.stringify(`${HOSTILE}\n`)}); process.exit(1)`],
        },
      },
      sandbox: { mode: 'in-process' },
      history: { enabled: false },
    }),
  );
  return { dir, config };
}

async function cli(
  argv: string[],
  cwd: string,
  stdin = '',
): Promise<{ code: number; out: string; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d: Buffer) => (out += d.toString()));
  stderr.on('data', (d: Buffer) => (err += d.toString()));
  const input = new PassThrough();
  input.end(stdin);
  const code = await main(argv, {
    stdout,
    stderr,
    stdin: input,
    cwd,
    env: {},
    signal: new AbortController().signal,
  });
  return { code, out, err };
}

/** No C0 control but tab and newline, no C1 control. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('terminal control sequences in human output', () => {
  it('neutralizeControls shows controls visibly and keeps tabs, newlines and CRLF', () => {
    expect(neutralizeControls(`${ESC}]0;t${BEL}a\tb\r\nc\rd\u009be\u202ef`)).toBe(
      '␛]0;t␇a\tb\r\nc␍d\\u009be\\u202ef',
    );
  });

  it('exec: what the script prints is shown, not executed; --json stays exact', async () => {
    const { dir, config } = tempProject();
    const script = `console.log(${JSON.stringify(`out ${HOSTILE}`)}); console.error(${JSON.stringify(`err ${HOSTILE}`)}); throw new Error(${JSON.stringify(`boom ${HOSTILE}`)});`;
    const plain = await cli(['exec', '-', '--config', config], dir, script);
    expect(plain.code).toBe(1);
    expect(plain.out).toContain('out ␛]52;c;cHduZWQ=␇␛]0;pwned␇␛[2J\\u009b31m');
    expect(plain.err).toContain('err ␛]52;c;');
    expect(plain.err).toContain('boom ␛]52;c;');
    expect(plain.out).not.toMatch(RAW_CONTROL);
    expect(plain.err).not.toMatch(RAW_CONTROL);
    const json = await cli(['exec', '-', '--json', '--config', config], dir, script);
    const parsed = JSON.parse(json.out) as { stdout: string; stderr: string };
    expect(parsed.stdout).toBe(`out ${HOSTILE}\n`);
    expect(parsed.stderr).toBe(`err ${HOSTILE}\n`);
  });

  it('tools and search: server names, descriptions and stderr are shown, not executed', async () => {
    const { dir, config } = tempProject();
    const tools = await cli(['tools', '--config', config], dir);
    expect(tools.out).toContain('Weather lookup ␛]52;c;');
    expect(tools.out).toContain('bad␛[2J');
    expect(tools.out).not.toMatch(RAW_CONTROL);
    const declarations = await cli(['tools', '--declarations', '--config', config], dir);
    expect(declarations.out).toContain('lookup_weather');
    expect(declarations.out).not.toMatch(RAW_CONTROL);
    const search = await cli(['search', 'weather forecast', '--config', config], dir);
    expect(search.out).toContain('Weather lookup ␛]52;c;');
    expect(search.out).not.toMatch(RAW_CONTROL);
    expect(search.err).toContain('bad␛[2J');
    expect(search.err).not.toMatch(RAW_CONTROL);
    const json = await cli(['tools', '--json', '--config', config], dir);
    const parsed = JSON.parse(json.out) as { tools: { description: string }[] };
    expect(parsed.tools[0]!.description).toBe(`Weather lookup ${HOSTILE} forecast`);
  });

  it('graph: tool names from the usage history are shown, not executed; --format json stays exact', async () => {
    const dir = tempDir('codecall-tty-graph-');
    const config = join(dir, 'codecall.json');
    writeFileSync(config, JSON.stringify({ mcpServers: {} }));
    const hostile = `weather.look${ESC}]0;pwned${BEL}`;
    const store = await SqliteHistoryStore.open({ path: join(dir, '.codecall', 'history.sqlite') });
    try {
      for (let i = 0; i < 3; i++) await store.appendSequence([hostile, 'weather.report']);
    } finally {
      await store.close();
    }
    for (const format of ['text', 'mermaid', 'dot']) {
      const shown = await cli(['graph', '--format', format, '--config', config], dir);
      expect(shown.code, shown.err).toBe(0);
      // Text shows stand-ins; mermaid and dot quote labels as JSON strings (\u001b), also inert.
      expect(shown.out, format).toContain(format === 'text' ? 'look␛]0;pwned␇' : 'weather.look');
      expect(shown.out, format).not.toMatch(RAW_CONTROL);
    }
    const json = await cli(['graph', '--format', 'json', '--config', config], dir);
    const parsed = JSON.parse(json.out) as { edges: { from: string }[] };
    expect(parsed.edges.map((e) => e.from)).toContain(hostile);
  });
});
