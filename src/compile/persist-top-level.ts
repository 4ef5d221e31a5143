/**
 * @module
 * REPL-style rewrite for session runs: the top-level declarations of a compiled script become
 * globals of the sandbox's context, so the next script of the same session sees them.
 *
 * Compiled code is one async function expression (`(async function () { … })`), so a
 * top-level `const x` is local to that call and gone when it returns. This rewrite (on
 * esbuild's output, parsed with acorn) turns, at the top level of that function only:
 * - `const` / `let` / `var` declarations into assignments to globals declared with `var` in
 *   front of the function (`const { a, b } = f()` → `;( { a, b } = f())`, `let z` →
 *   `;( z = void 0)`), so re-running a script that declares the same name works;
 * - `function f() {}` into itself plus `f` copied to the global object when the script starts
 *   (function declarations stay hoisted);
 * - `class A {}` into `A = class A {};`.
 *
 * What does not persist: declarations inside blocks, loops and functions (they stay local, as
 * in any script), and `const`-ness (a persisted `const` can be reassigned by a later script).
 * Every edit stays on its own line, so the caller can shift its position table by the
 * returned edits.
 */
import { createRequire } from 'node:module';

import type * as Acorn from 'acorn';

/** One text edit of the compiled code: replace `[start, end)` by `text`. */
export interface CodeEdit {
  start: number;
  end: number;
  text: string;
}

/** The rewrite of {@link persistTopLevel}: the edits to apply, or why the code could not be read. */
export type PersistResult = { ok: true; edits: CodeEdit[] } | { ok: false; message: string };

/** Name of the script-level variable that holds the global object (for function declarations). */
const GLOBAL_NAME = '__codecall_global';

let acorn: typeof Acorn | undefined;

/** acorn, loaded on first use (only session runs need it). */
function loadAcorn(): typeof Acorn {
  acorn ??= createRequire(import.meta.url)('acorn') as typeof Acorn;
  return acorn;
}

/** Names bound by a declaration pattern. */
function boundNames(pattern: Acorn.Pattern, into: string[]): void {
  switch (pattern.type) {
    case 'Identifier':
      into.push(pattern.name);
      return;
    case 'ObjectPattern':
      for (const property of pattern.properties) {
        if (property.type === 'RestElement') boundNames(property.argument, into);
        else boundNames(property.value, into);
      }
      return;
    case 'ArrayPattern':
      for (const element of pattern.elements) if (element) boundNames(element, into);
      return;
    case 'RestElement':
      boundNames(pattern.argument, into);
      return;
    case 'AssignmentPattern':
      boundNames(pattern.left, into);
      return;
    default:
      return;
  }
}

/**
 * Computes the edits that make the top-level declarations of compiled code (`code` as esbuild
 * printed it, before the position table) persist as globals.
 */
export function persistTopLevel(code: string): PersistResult {
  let program: Acorn.Program;
  try {
    program = loadAcorn().parse(code, { ecmaVersion: 'latest', sourceType: 'script' });
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
  const first = program.body[0];
  const wrapper =
    first?.type === 'ExpressionStatement' && first.expression.type === 'FunctionExpression'
      ? first.expression
      : undefined;
  if (!wrapper) return { ok: false, message: 'the compiled script is not one function expression' };
  const edits: CodeEdit[] = [];
  const varNames: string[] = [];
  const functionNames: string[] = [];
  for (const statement of wrapper.body.body) {
    if (statement.type === 'VariableDeclaration') {
      if (statement.kind !== 'const' && statement.kind !== 'let' && statement.kind !== 'var') continue;
      const keyword = statement.kind.length;
      edits.push({ start: statement.start, end: statement.start + keyword, text: ';('.padEnd(keyword, ' ') });
      for (const declarator of statement.declarations) {
        boundNames(declarator.id, varNames);
        if (declarator.init === null || declarator.init === undefined) {
          edits.push({ start: declarator.id.end, end: declarator.id.end, text: ' = void 0' });
        }
      }
      const last = statement.declarations[statement.declarations.length - 1]!;
      edits.push({ start: last.end, end: last.end, text: ')' });
    } else if (statement.type === 'FunctionDeclaration') {
      functionNames.push(statement.id.name);
    } else if (statement.type === 'ClassDeclaration') {
      varNames.push(statement.id.name);
      edits.push({ start: statement.start, end: statement.start, text: `${statement.id.name} = ` });
      edits.push({ start: statement.end, end: statement.end, text: ';' });
    }
  }
  const names = [...new Set(varNames)];
  const prefix = `var ${GLOBAL_NAME} = this;${names.length > 0 ? ` var ${names.join(', ')};` : ''} `;
  edits.push({ start: 0, end: 0, text: prefix });
  if (functionNames.length > 0) {
    const bodyStart = wrapper.body.start + 1;
    const copies = [...new Set(functionNames)].map((name) => `${GLOBAL_NAME}.${name} = ${name};`).join(' ');
    edits.push({ start: bodyStart, end: bodyStart, text: ` ${copies}` });
  }
  return { ok: true, edits };
}

/**
 * Applies `edits` to `code` and returns the new code with a function that maps a (0-based)
 * line and column of the old code to the column in the new code (edits never span lines).
 */
export function applyEdits(
  code: string,
  edits: CodeEdit[],
): { code: string; shiftColumn: (line: number, column: number) => number } {
  const sorted = [...edits].sort((a, b) => a.start - b.start || a.end - b.end);
  const lineStarts = [0];
  for (let index = 0; index < code.length; index++) if (code[index] === '\n') lineStarts.push(index + 1);
  const lineOf = (position: number): number => {
    let low = 0;
    let high = lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (lineStarts[middle]! <= position) low = middle;
      else high = middle - 1;
    }
    return low;
  };
  /** Per line: `[column where the edit ends in the old code, characters added]`. */
  const shifts = new Map<number, [number, number][]>();
  let out = '';
  let at = 0;
  for (const edit of sorted) {
    out += code.slice(at, edit.start) + edit.text;
    at = edit.end;
    const line = lineOf(edit.start);
    const list = shifts.get(line) ?? [];
    list.push([edit.end - lineStarts[line]!, edit.text.length - (edit.end - edit.start)]);
    shifts.set(line, list);
  }
  out += code.slice(at);
  return {
    code: out,
    shiftColumn(line, column) {
      let shifted = column;
      for (const [end, added] of shifts.get(line) ?? []) if (column >= end) shifted += added;
      return shifted;
    },
  };
}
