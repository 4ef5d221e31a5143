/**
 * @module
 * Turns what a script threw (read inside the isolate into strings) into a message for the
 * model, with stack positions mapped back to the model's own lines through the position table
 * that `compileScript` appends to compiled code (`//# codecall-map=`). Frames of the prelude
 * are dropped: the model sees only its own code.
 */
import type { ThrownReport } from './engine.js';

/**
 * Filename the model's script carries in stack traces. Defined here, not in the engine, so that
 * a host in process mode reads script errors without loading isolated-vm.
 */
export const SCRIPT_FILENAME = 'script.js';

/** Marker of the position table at the end of compiled code (written by `compileScript`). */
const CODE_MAP_MARKER = '\n//# codecall-map=';
/** Stack frames shown to the model. */
const MAX_FRAMES = 8;

/** The position table of compiled code (see the module comment), when it has one. */
export function readCodeMap(code: string): number[][] | undefined {
  const at = code.lastIndexOf(CODE_MAP_MARKER);
  if (at === -1) return undefined;
  try {
    const map = JSON.parse(code.slice(at + CODE_MAP_MARKER.length)) as unknown;
    return Array.isArray(map) ? (map as number[][]) : undefined;
  } catch {
    return undefined;
  }
}

/** Maps a 1-based generated position to the model's line and column, when known. */
export function mapPosition(
  map: number[][] | undefined,
  line: number,
  column: number,
): { line: number; column: number } | undefined {
  const segments = map?.[line - 1];
  if (!segments || segments.length < 3) return map ? undefined : { line, column };
  let best = 0;
  for (let index = 0; index + 2 < segments.length; index += 3) {
    if (segments[index]! <= column - 1) best = index;
    else break;
  }
  return { line: segments[best + 1]!, column: segments[best + 2]! + 1 };
}

/** A call site as the sandbox reports it: generated `line:column`. */
const SITE = /^(\d{1,9}):(\d{1,9})$/;

/**
 * The model's line of a call site the sandbox reported (`line:column` in the compiled code,
 * whose position table is `map`), or undefined when the report is malformed or outside the
 * model's code.
 */
export function mapCallSite(map: number[][] | undefined, site: string): number | undefined {
  const match = SITE.exec(site);
  if (!match) return undefined;
  return mapPosition(map, Number(match[1]), Number(match[2]))?.line;
}

const FRAME = new RegExp(
  `^\\s*at (?:async )?(?:(.*?) \\()?${SCRIPT_FILENAME.replace('.', '\\.')}:(\\d+):(\\d+)\\)?$`,
);

/** The model-facing text of an uncaught error: `Uncaught Name: message` and mapped frames. */
export function describeThrown(thrown: ThrownReport, code: string): string {
  let head: string;
  if (thrown.value !== undefined) head = `Uncaught ${thrown.value}`;
  else {
    const name = thrown.name ?? 'Error';
    head =
      thrown.message !== undefined && thrown.message !== ''
        ? `Uncaught ${name}: ${thrown.message}`
        : `Uncaught ${name}`;
  }
  if (thrown.stack === undefined) return head;
  const map = readCodeMap(code);
  const frames: string[] = [];
  for (const line of thrown.stack.split('\n')) {
    const match = FRAME.exec(line);
    if (!match) continue;
    const position = mapPosition(map, Number(match[2]), Number(match[3]));
    if (!position) continue;
    const fn =
      match[1] && !/^(?:async )?<anonymous>$/.test(match[1]) ? `${match[1].replace(/^async /, '')} ` : '';
    frames.push(`    at ${fn}line ${position.line}, column ${position.column}`);
    if (frames.length >= MAX_FRAMES) break;
  }
  return frames.length > 0 ? `${head}\n${frames.join('\n')}` : head;
}
