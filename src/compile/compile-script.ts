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
import { transform as esbuildTransform, transformSync, type Message, type TransformOptions } from 'esbuild';

import {
  DEFAULT_COMPILE_CACHE_ENTRIES,
  DEFAULT_COMPILE_CACHE_MAX_BYTES,
  DEFAULT_MAX_CODE_BYTES,
} from '../config/defaults.js';
import { applyEdits, persistTopLevel } from './persist-top-level.js';

/** Options for {@link compileScript}. */
export interface CompileScriptOptions {
  /**
   * Bytes of source accepted; larger scripts come back as a `SYNTAX_ERROR` result.
   * @defaultValue {@link DEFAULT_MAX_CODE_BYTES}
   */
  maxCodeBytes?: number;
  /**
   * Compile for a session: top-level declarations (`const`, `let`, `var`, `function`, `class`)
   * become globals of the sandbox context, so later scripts of the session see them (see
   * `persist-top-level.ts`).
   * @defaultValue false
   */
  persistTopLevel?: boolean;
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

function transformOptions(loader: 'ts' | 'js'): TransformOptions {
  return {
    loader,
    format: 'esm',
    target: 'esnext',
    sourcemap: 'external',
    sourcefile: 'script',
    logLevel: 'silent',
    supported: { 'top-level-await': true },
  };
}

type TransformOutput = { code: string; map: string };

/** A script checked and wrapped, ready for esbuild; or the reason it cannot be compiled. */
type Stage =
  | { ok: true; wrapped: string; extracted: Extracted; prepared: Prepared; sourceLines: string[] }
  | CompileResult;

/** Compiled scripts by `maxCodeBytes \0 persistTopLevel \0 source`, oldest first (bounded by entries and bytes). */
const compiled = new Map<string, { result: CompileResult; bytes: number }>();
let compiledBytes = 0;

function cacheKey(source: string, options: CompileScriptOptions): string {
  const maxCodeBytes = options.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES;
  return `${maxCodeBytes}\0${options.persistTopLevel === true ? 1 : 0}\0${source}`;
}

/** A copy of the cached result of `key`, if any (so a caller's change never reaches the next). */
function cachedResult(key: string): CompileResult | undefined {
  const cached = compiled.get(key);
  if (cached === undefined) return undefined;
  // Most recently used last.
  compiled.delete(key);
  compiled.set(key, cached);
  return structuredClone(cached.result);
}

function remember(key: string, result: CompileResult): CompileResult {
  const bytes = key.length + (result.ok ? result.code.length : result.error.message.length);
  if (bytes <= DEFAULT_COMPILE_CACHE_MAX_BYTES / 4) {
    compiled.set(key, { result: structuredClone(result), bytes });
    compiledBytes += bytes;
    for (const [oldKey, entry] of compiled) {
      if (compiled.size <= DEFAULT_COMPILE_CACHE_ENTRIES && compiledBytes <= DEFAULT_COMPILE_CACHE_MAX_BYTES)
        break;
      compiled.delete(oldKey);
      compiledBytes -= entry.bytes;
    }
  }
  return result;
}

function checkAndWrap(source: string, options: CompileScriptOptions): Stage {
  const maxCodeBytes = options.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES;
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
  return { ok: true, wrapped, extracted, prepared, sourceLines };
}

/** The syntax error for a script neither the TypeScript nor the JavaScript loader accepted. */
function failed(tsError: unknown, stage: Extract<Stage, { wrapped: string }>): CompileResult {
  const first = (tsError as { errors?: Message[] }).errors?.[0];
  // Not a diagnostic (esbuild itself failed): a host problem, not the model's.
  if (!first) throw tsError;
  return describe(first, stage.extracted, stage.sourceLines);
}

function finish(
  output: TransformOutput,
  stage: Extract<Stage, { wrapped: string }>,
  options: CompileScriptOptions,
): CompileResult {
  const { extracted, prepared } = stage;
  const code = output.code;
  const leftover = /^\s*import\b[^\n]*?(['"])([^'"\n]+)\1/m.exec(code);
  if (leftover) {
    const specifier = leftover[2]!;
    const at = prepared.imports.find((entry) => entry.text.includes(specifier));
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
  let map = buildCodeMap((JSON.parse(output.map) as { mappings: string }).mappings, extracted.lineMap);
  let persisted = code;
  if (options.persistTopLevel === true) {
    const rewrite = persistTopLevel(code);
    if (!rewrite.ok) {
      return syntaxError(
        `The script could not be prepared for a session (${rewrite.message}). Run it without a session, or simplify its top-level code.`,
        1,
        1,
      );
    }
    const applied = applyEdits(code, rewrite.edits);
    persisted = applied.code;
    map = map.map((flat, line) =>
      flat.map((value, index) => (index % 3 === 0 ? applied.shiftColumn(line, value) : value)),
    );
  }
  const body = persisted.replace(/;\s*$/, '');
  return { ok: true, code: `${body}${CODE_MAP_MARKER}${JSON.stringify(map)}\n` };
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
  if (typeof source !== 'string')
    return syntaxError('The script must be a string of JavaScript or TypeScript.', 1, 1);
  const key = cacheKey(source, options);
  const hit = cachedResult(key);
  if (hit !== undefined) return hit;
  const stage = checkAndWrap(source, options);
  if (!('wrapped' in stage)) return remember(key, stage);
  let output: TransformOutput;
  try {
    output = transformSync(stage.wrapped, transformOptions('ts'));
  } catch (tsError) {
    try {
      output = transformSync(stage.wrapped, transformOptions('js'));
    } catch {
      return remember(key, failed(tsError, stage));
    }
  }
  return remember(key, finish(output, stage, options));
}

/**
 * {@link compileScript} without blocking the event loop: esbuild works in its service process.
 * The first call in a process starts that service (a few ms), where the synchronous API starts a
 * worker thread (about ten times longer), so a host that compiles once at start-up, such as
 * `codecall exec`, answers sooner. Same results as {@link compileScript}.
 */
export async function compileScriptAsync(
  source: string,
  options: CompileScriptOptions = {},
): Promise<CompileResult> {
  if (typeof source !== 'string')
    return syntaxError('The script must be a string of JavaScript or TypeScript.', 1, 1);
  const key = cacheKey(source, options);
  const hit = cachedResult(key);
  if (hit !== undefined) return hit;
  const stage = checkAndWrap(source, options);
  if (!('wrapped' in stage)) return remember(key, stage);
  let output: TransformOutput;
  try {
    output = await esbuildTransform(stage.wrapped, transformOptions('ts'));
  } catch (tsError) {
    try {
      output = await esbuildTransform(stage.wrapped, transformOptions('js'));
    } catch {
      return remember(key, failed(tsError, stage));
    }
  }
  return remember(key, finish(output, stage, options));
}
