/**
 * @module
 * Turns what a model writes into JavaScript the sandbox runs. Accepts JavaScript or
 * TypeScript, with or without Markdown fences, with top-level `await` and `return`, and with
 * imports that bind nothing at runtime (type-only or unused imports are dropped). Types are
 * stripped with esbuild. A syntax error is returned as data with the line and column in the
 * model's own text, never thrown.
 *
 * The compiled code is a single async function expression (`(async function () { … })`) that the
 * sandbox calls. It ends with a `//# codecall-map=` comment: a per-line table from generated
 * positions to the model's original line and column, which the sandbox host uses to point
 * runtime errors at the model's own lines.
 */
import { transform as esbuildTransform, transformSync, type Message } from 'esbuild';

import { DEFAULT_MAX_CODE_BYTES } from '../config/defaults.js';

/** Options for {@link compileScript}. */
export interface CompileScriptOptions {
  /**
   * Bytes of source accepted; larger scripts come back as a `SYNTAX_ERROR` result.
   * @defaultValue {@link DEFAULT_MAX_CODE_BYTES}
   */
  maxCodeBytes?: number;
}

/** A syntax problem in the model's code, positioned in the model's own text (1-based). */
export interface CompileError {
  code: 'SYNTAX_ERROR';
  /** Message phrased for the model: what is wrong, where, and the offending line. */
  message: string;
  line: number;
  column: number;
}

/** The result of {@link compileScript}: compiled code, or a syntax error as data. */
export type CompileResult = { ok: true; code: string } | { ok: false; error: CompileError };

/** Marker of the position table appended to compiled code (read by the sandbox host). */
export const CODE_MAP_MARKER = '\n//# codecall-map=';

const WRAP_OPEN = '(async function () {';
const WRAP_CLOSE = '\n});';
const FENCE = /^\s*(`{3,}|~{3,})\s*([\w+.-]*)[^\n]*$/;
const CODE_LANGS = new Set([
  '',
  'js',
  'javascript',
  'ts',
  'typescript',
  'mjs',
  'cjs',
  'mts',
  'jsx',
  'tsx',
  'node',
]);
const IMPORT_START = /^\s*import\b(?!\s*[(.])/;
const IMPORT_STATEMENT =
  /^\s*import\b(?:[^'";]*?\bfrom)?\s*(['"])[^'"\n]+\1\s*(?:(?:with|assert)\s*\{[^}]*\})?\s*;?/;
/** Lines one import statement may span. */
const MAX_IMPORT_LINES = 50;
const EXPORT_MODIFIER =
  /^(\s*)(export\s+(?:default\s+)?)(?=(?:async\s+)?function\b|class\b|const\b|let\b|var\b|interface\b|type\b|enum\b|abstract\b|declare\b|namespace\b)/;
const EXPORT_LIST = /^\s*export\s*(?:type\s*)?\{[^}]*\}\s*(?:from\s*(['"])[^'"]*\1)?\s*;?\s*$/;

interface Extracted {
  /** Source lines handed to esbuild (fences removed). */
  lines: string[];
  /** 1-based original line of each entry of `lines`. */
  lineMap: number[];
}

/** Takes the code out of Markdown fences, remembering where each line came from. */
function extractCode(source: string): Extracted {
  const all = source.replace(/\r\n?/g, '\n').split('\n');
  const fenceAt = all.findIndex((line) => FENCE.test(line));
  if (fenceAt === -1) return { lines: all, lineMap: all.map((_, index) => index + 1) };
  const blocks: { lang: string; start: number; end: number }[] = [];
  let index = 0;
  while (index < all.length) {
    const open = FENCE.exec(all[index]!);
    if (!open) {
      index++;
      continue;
    }
    const marker = open[1]!;
    const lang = open[2]!.toLowerCase();
    let end = index + 1;
    while (end < all.length && !all[end]!.trim().startsWith(marker)) end++;
    blocks.push({ lang, start: index + 1, end });
    index = end + 1;
  }
  const code = blocks.filter((block) => CODE_LANGS.has(block.lang));
  const chosen = code.length > 0 ? code : blocks;
  const lines: string[] = [];
  const lineMap: number[] = [];
  for (const block of chosen) {
    for (let line = block.start; line < block.end; line++) {
      lines.push(all[line]!);
      lineMap.push(line + 1);
    }
  }
  return { lines, lineMap };
}

interface Prepared {
  body: string;
  /** Import statements moved after the wrapper, with the body line each started on. */
  imports: { text: string; line: number }[];
}

/**
 * Makes module syntax legal inside a function body without moving any line: import
 * statements are blanked (and re-appended after the wrapper, so esbuild can drop the ones that
 * bind nothing at runtime), `export` modifiers become spaces.
 */
function prepareBody(lines: string[]): Prepared {
  const out = [...lines];
  const imports: { text: string; line: number }[] = [];
  for (let index = 0; index < out.length; index++) {
    const line = out[index]!;
    if (IMPORT_START.test(line)) {
      const window = out.slice(index, index + MAX_IMPORT_LINES).join('\n');
      const match = IMPORT_STATEMENT.exec(window);
      if (match) {
        imports.push({ text: match[0], line: index });
        const blanked = (match[0].replace(/[^\n]/g, ' ') + window.slice(match[0].length)).split('\n');
        for (let offset = 0; offset < blanked.length; offset++) out[index + offset] = blanked[offset]!;
        index += match[0].split('\n').length - 1;
        continue;
      }
    }
    if (EXPORT_LIST.test(line)) {
      out[index] = '';
      continue;
    }
    const exported = EXPORT_MODIFIER.exec(line);
    if (exported)
      out[index] = exported[1]! + ' '.repeat(exported[2]!.length) + line.slice(exported[0].length);
  }
  return { body: out.join('\n'), imports };
}

const VLQ = new Map(
  [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].map((c, i) => [c, i]),
);

/** Decodes source-map `mappings` into `[generatedColumn, originalLine, originalColumn]` per line. */
function decodeMappings(mappings: string): number[][][] {
  const lines: number[][][] = [];
  let sourceLine = 0;
  let sourceColumn = 0;
  let source = 0;
  let name = 0;
  for (const group of mappings.split(';')) {
    const current: number[][] = [];
    let generatedColumn = 0;
    for (const segment of group.split(',')) {
      if (segment === '') continue;
      const values: number[] = [];
      let value = 0;
      let shift = 0;
      for (const char of segment) {
        const digit = VLQ.get(char) ?? 0;
        value += (digit & 31) << shift;
        if (digit & 32) shift += 5;
        else {
          values.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      generatedColumn += values[0] ?? 0;
      if (values.length >= 4) {
        source += values[1]!;
        sourceLine += values[2]!;
        sourceColumn += values[3]!;
        if (values.length >= 5) name += values[4]!;
        current.push([generatedColumn, sourceLine, sourceColumn]);
      }
    }
    lines.push(current);
  }
  void source;
  void name;
  return lines;
}

/**
 * Builds the position table appended to compiled code: for each generated line, a flat list
 * `[generatedColumn, originalLine, originalColumn, …]` (0-based columns, 1-based lines in the
 * model's own text).
 */
function buildCodeMap(mappings: string, lineMap: number[]): number[][] {
  return decodeMappings(mappings).map((segments) => {
    const flat: number[] = [];
    for (const [generatedColumn, wrappedLine, column] of segments as [number, number, number][]) {
      // Wrapped line 0 is the wrapper's opening line; body line k is wrapped line k + 1.
      const original = lineMap[Math.min(Math.max(wrappedLine - 1, 0), lineMap.length - 1)] ?? 1;
      flat.push(generatedColumn, original, column);
    }
    return flat;
  });
}

function syntaxError(message: string, line: number, column: number): CompileResult {
  return { ok: false, error: { code: 'SYNTAX_ERROR', message, line, column } };
}

function describe(message: Message, extracted: Extracted, sourceLines: string[]): CompileResult {
  const location = message.location;
  const bodyLines = extracted.lineMap.length;
  const bodyIndex = Math.min(Math.max((location?.line ?? 1) - 2, 0), Math.max(bodyLines - 1, 0));
  const line = extracted.lineMap[bodyIndex] ?? 1;
  const atWrapper = (location?.line ?? 1) - 2 >= bodyLines || (location?.line ?? 1) < 2;
  const column = atWrapper ? 1 : (location?.column ?? 0) + 1;
  const text = sourceLines[line - 1] ?? '';
  const hint = atWrapper
    ? ' (the script ends before this construct is closed: check brackets and quotes)'
    : '';
  const shown = text.length > 200 ? `${text.slice(0, 200)}…` : text;
  const pointer = atWrapper ? '' : `\n${' '.repeat(String(line).length)} | ${' '.repeat(column - 1)}^`;
  return syntaxError(
    `SyntaxError at line ${line}, column ${column}: ${message.text}${hint}\n${line} | ${shown}${pointer}`,
    line,
    column,
  );
}

const TRANSFORM_OPTIONS = {
  format: 'esm',
  target: 'esnext',
  sourcemap: 'external',
  sourcefile: 'script',
  logLevel: 'silent',
  supported: { 'top-level-await': true },
} as const;

function transform(source: string, loader: 'ts' | 'js') {
  return transformSync(source, { ...TRANSFORM_OPTIONS, loader });
}

function transformAsync(source: string, loader: 'ts' | 'js') {
  return esbuildTransform(source, { ...TRANSFORM_OPTIONS, loader });
}

/**
 * Compiles model-written JavaScript or TypeScript for {@link SandboxPool.run}.
 *
 * @example
 * ```ts
 * const compiled = compileScript('```ts\nconst n: number = await tools.math.add({ a: 1, b: 2 });\nconsole.log(n);\n```');
 * if (!compiled.ok) console.log(compiled.error.message);
 * ```
 */
export function compileScript(source: string, options: CompileScriptOptions = {}): CompileResult {
  const prepared = prepareScript(source, options);
  if ('ok' in prepared) return prepared;
  let output: { code: string; map: string };
  try {
    output = transform(prepared.wrapped, 'ts');
  } catch (tsError) {
    try {
      output = transform(prepared.wrapped, 'js');
    } catch {
      return describeFailure(tsError, prepared);
    }
  }
  return finishScript(output, prepared);
}

/**
 * {@link compileScript} without blocking the event loop: esbuild compiles on its service process
 * while the host serves others (what the executor uses; the synchronous form waits for it).
 *
 * @example
 * ```ts
 * const compiled = await compileScriptAsync('console.log(1 + 1)');
 * ```
 */
export async function compileScriptAsync(
  source: string,
  options: CompileScriptOptions = {},
): Promise<CompileResult> {
  const prepared = prepareScript(source, options);
  if ('ok' in prepared) return prepared;
  let output: { code: string; map: string };
  try {
    output = await transformAsync(prepared.wrapped, 'ts');
  } catch (tsError) {
    try {
      output = await transformAsync(prepared.wrapped, 'js');
    } catch {
      return describeFailure(tsError, prepared);
    }
  }
  return finishScript(output, prepared);
}

interface PreparedScript {
  wrapped: string;
  extracted: Extracted;
  sourceLines: string[];
  imports: Array<{ text: string; line: number }>;
}

/** Bounds, code-fence extraction and wrapping: a syntax error result, or what to transform. */
function prepareScript(source: string, options: CompileScriptOptions): PreparedScript | CompileResult {
  const maxCodeBytes = options.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES;
  if (typeof source !== 'string')
    return syntaxError('The script must be a string of JavaScript or TypeScript.', 1, 1);
  const bytes = Buffer.byteLength(source);
  if (bytes > maxCodeBytes) {
    return syntaxError(
      `The script is ${bytes} bytes; the limit is ${maxCodeBytes} bytes. Send a shorter script (load data with tool calls instead of inlining it).`,
      1,
      1,
    );
  }
  const sourceLines = source.replace(/\r\n?/g, '\n').split('\n');
  const extracted = extractCode(source);
  if (extracted.lines.every((line) => line.trim() === '')) {
    return syntaxError('The script is empty. Send JavaScript or TypeScript code to run.', 1, 1);
  }
  const prepared = prepareBody(extracted.lines);
  const wrapped = `${WRAP_OPEN}\n${prepared.body}${WRAP_CLOSE}\n${prepared.imports.map((i) => i.text).join('\n')}`;
  return { wrapped, extracted, sourceLines, imports: prepared.imports };
}

/** The model's syntax error from esbuild's diagnostics; rethrows when esbuild itself failed. */
function describeFailure(tsError: unknown, prepared: PreparedScript): CompileResult {
  const first = (tsError as { errors?: Message[] }).errors?.[0];
  // Not a diagnostic (esbuild itself failed): a host problem, not the model's.
  if (!first) throw tsError;
  return describe(first, prepared.extracted, prepared.sourceLines);
}

function finishScript(
  output: { code: string; map: string },
  { extracted, imports }: PreparedScript,
): CompileResult {
  const code = output.code;
  const leftover = /^\s*import\b[^\n]*?(['"])([^'"\n]+)\1/m.exec(code);
  if (leftover) {
    const specifier = leftover[2]!;
    const at = imports.find((entry) => entry.text.includes(specifier));
    const line = at ? (extracted.lineMap[at.line] ?? 1) : 1;
    return syntaxError(
      `Line ${line}: \`import … from '${specifier}'\` is not available: the sandbox has no modules, files, network or packages. ` +
        'Remove the import; call tools as `await tools.<server>.<tool>(args)` or `await callTool("server.tool", args)`.',
      line,
      1,
    );
  }
  if (/^export\b/m.test(code)) {
    return syntaxError(
      'The script uses CommonJS (`module`, `exports` or `require`), which the sandbox does not have. Use plain top-level code: `await` tool calls, `console.log` results, `return` a value.',
      1,
      1,
    );
  }
  const body = code.replace(/;\s*$/, '');
  const map = buildCodeMap((JSON.parse(output.map) as { mappings: string }).mappings, extracted.lineMap);
  return { ok: true, code: `${body}${CODE_MAP_MARKER}${JSON.stringify(map)}\n` };
}
