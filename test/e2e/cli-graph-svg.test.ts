/**
 * `codecall graph --format svg` (the real bin, Graphviz in WebAssembly from `@viz-js/viz`, no
 * system Graphviz) over a real SQLite usage history that holds a hostile tool name (markup, `&`,
 * an entity, quotes, a Graphviz escape, a line break, a control character). The SVG must be
 * well-formed XML, parsed by a real headless Chromium (Debian's `chromium`, through puppeteer-core)
 * that also draws it; every name must come back as the text it is, the hostile one inert (no
 * element or attribute of its own). `--out` writes the same SVG to a file and says where on stderr.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { SqliteHistoryStore } from '../../src/store/sqlite-history-store.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { expectScreenshot, findChromium, launchChromium, screenshotFolder } from './browser-helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const BIN = join(ROOT, 'bin', 'codecall.js');

/** A tool name an MCP server could send: markup, quotes, `&`, an entity, `\N`, a line break, a bell. */
const HOSTILE = 'evil.<svg onload="globalThis.__pwned=1">&amp;</svg> & "q" \\N\nline2\u0007';
/** How Graphviz shows it: one text line per line of the name, the bell as ␇. */
const HOSTILE_LINES = ['evil.<svg onload="globalThis.__pwned=1">&amp;</svg> & "q" \\N', 'line2␇'];
const TOOLS = ['expenses.get_team_members', 'expenses.get_expenses', 'expenses.get_budget_by_level'];

function codecall(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    child.stdin.end();
  });
}

/** The browser's XML parser and the nodes it gives, as {@link parseSvg} uses them. */
interface XmlElement {
  localName: string;
  textContent: string | null;
  attributes: ArrayLike<{ name: string }>;
}
interface XmlDocument {
  documentElement: XmlElement;
  querySelector(selector: string): XmlElement | null;
  querySelectorAll(selector: string): ArrayLike<XmlElement>;
}

/** What the browser's XML parser makes of `svg` (runs in the page). */
const parseSvg = (
  svg: string,
): { error: string | null; root: string; texts: string[]; elements: string[]; handlers: number } => {
  const { DOMParser } = globalThis as unknown as {
    DOMParser: new () => { parseFromString(text: string, type: string): XmlDocument };
  };
  const document = new DOMParser().parseFromString(svg, 'image/svg+xml');
  const error = document.querySelector('parsererror');
  const all = Array.from(document.querySelectorAll('*'));
  return {
    error: error === null ? null : (error.textContent ?? 'parsererror'),
    root: document.documentElement.localName,
    texts: Array.from(document.querySelectorAll('text'), (t) => t.textContent ?? ''),
    elements: [...new Set(all.map((e) => e.localName))].sort(),
    handlers: all.filter((e) => Array.from(e.attributes).some((a) => a.name.startsWith('on'))).length,
  };
};

const chromium = findChromium();
let dir: string;
let history: string;

beforeAll(async () => {
  dir = tempDir('codecall-graph-svg-');
  history = join(dir, 'history.sqlite');
  const store = await SqliteHistoryStore.open({ path: history, writer: 'inline' });
  for (let i = 0; i < 3; i++) await store.appendSequence(TOOLS);
  await store.appendSequence([TOOLS[0]!, HOSTILE, TOOLS[1]!]);
  await store.close();
});

describe('codecall graph --format svg', () => {
  it('prints an SVG of the graph with every tool name escaped as XML text', async () => {
    const result = await codecall(['graph', '--format', 'svg', '--history', history], dir);
    expect(result.stderr).toContain('4 recorded runs');
    expect(result.code).toBe(0);
    const svg = result.stdout;
    expect(svg).toMatch(/^<\?xml version="1\.0" encoding="UTF-8" standalone="no"\?>\n/);
    expect(svg).toMatch(/<\/svg>\n$/);
    for (const tool of TOOLS) expect(svg).toContain(`>${tool}</text>`);
    // The name's first line as XML text: markup, quotes and the entity escaped, nothing raw.
    expect(svg).toContain(
      '>evil.&lt;svg onload=&quot;globalThis.__pwned=1&quot;&gt;&amp;amp;&lt;/svg&gt; &amp; &quot;q&quot; \\N</text>',
    );
    expect(svg).toContain('>line2␇</text>');
    expect(svg).not.toContain('<svg onload');
    expect(svg).not.toContain('\u0007');
    expect(svg).toContain('>3 (75%)</text>');
  });

  it('--out writes the same SVG to a file and says where on stderr', async () => {
    const printed = (await codecall(['graph', '--format', 'svg', '--history', history], dir)).stdout;
    const result = await codecall(
      ['graph', '--format', 'svg', '--history', history, '--out', 'graph.svg'],
      dir,
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    const file = join(dir, 'graph.svg');
    expect(result.stderr).toContain(`codecall graph: wrote the svg of 4 edges to ${file}.\n`);
    expect(readFileSync(file, 'utf8')).toBe(printed);
  });

  // On CI a missing Chromium fails the test, never skips it.
  it.skipIf(
    chromium === undefined &&
      !(process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== 'false'),
  )(
    'is well-formed XML that Chromium parses and draws; the hostile name stays text',
    async () => {
      const file = join(dir, 'browser.svg');
      const written = await codecall(['graph', '--format', 'svg', '--history', history, '--out', file], dir);
      expect(written.code, written.stderr).toBe(0);
      const svg = readFileSync(file, 'utf8');
      const browser = await launchChromium(chromium!);
      try {
        const page = await browser.newPage();
        await page.goto('about:blank');
        const parsed = await page.evaluate(parseSvg, svg);
        expect(parsed.error).toBeNull();
        expect(parsed.root).toBe('svg');
        expect(parsed.handlers).toBe(0);
        // Graphviz's own elements only: no element the name could have added.
        expect(parsed.elements).toEqual(['g', 'path', 'polygon', 'svg', 'text', 'title']);
        for (const tool of TOOLS) expect(parsed.texts).toContain(tool);
        const at = parsed.texts.indexOf(HOSTILE_LINES[0]!);
        expect(at).toBeGreaterThanOrEqual(0);
        expect(parsed.texts[at + 1]).toBe(HOSTILE_LINES[1]);

        await page.setViewport({ width: 1400, height: 300 });
        await page.goto(pathToFileURL(file).href);
        expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
        const png = join(screenshotFolder(dir), 'graph-svg.png');
        await page.screenshot({ path: png });
        expectScreenshot(png, 1400, 5_000);
      } finally {
        await browser.close();
      }
    },
    180_000,
  );
});
