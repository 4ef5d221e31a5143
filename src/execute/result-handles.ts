/**
 * @module
 * Result handles (docs/data.md): a tool result of at least `minBytes` stays on the host, in the
 * run's {@link HandleTable}, and the script gets a handle (made by the prelude from the
 * descriptor) whose methods are calls of `codecall:handle` answered here: read whole when small
 * enough, rows in bounded chunks, and count / slice / pick / filter / sum / min / max / groupBy
 * without copying. Past `spillBytes` a result is written to the run's temp folder instead of
 * kept in memory; the folder is removed when the run ends. A handle passed inside a tool's
 * arguments (it serialises to `{"$codecall_handle": id}`) is replaced by its value here, on the
 * host. Ids are 128 random bits and the table is the run's own: a handle cannot be forged from a
 * number, reach another run's results, or outlive its run.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import {
  DEFAULT_RESULT_HANDLE_CHUNK_BYTES,
  DEFAULT_RESULT_HANDLE_MAX_ARGS_DEPTH,
  DEFAULT_RESULT_HANDLE_MAX_GROUPS,
  DEFAULT_RESULT_HANDLE_MAX_MEMORY_BYTES,
  DEFAULT_RESULT_HANDLE_MAX_PER_RUN,
  DEFAULT_RESULT_HANDLE_MIN_BYTES,
  DEFAULT_RESULT_HANDLE_READ_MAX_BYTES,
  DEFAULT_RESULT_HANDLE_SPILL_BYTES,
  DEFAULT_RESULT_HANDLE_YIELD_ROWS,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { HANDLE_CALL, HANDLE_MARKER_KEY, HeldResult, type HandleDescriptor } from '../util/held-result.js';
import { JsonText, utf8ByteLength } from '../util/json-text.js';
import type { SandboxToolBinding } from '../types.js';

/** The binding that lets a run's handles call the host (never listed under `tools`). */
export const HANDLE_BINDING: SandboxToolBinding = {
  name: HANDLE_CALL,
  namespace: 'codecall_handle',
  member: 'op',
};

/** True for the name of a handle's calls. */
export function isHandleCall(name: string): boolean {
  return name === HANDLE_CALL;
}

/** Options of result handles; every field has a `DEFAULT_RESULT_HANDLE_*` default. */
export interface ResultHandleOptions {
  /** @defaultValue {@link DEFAULT_RESULT_HANDLE_MIN_BYTES} (16 MiB) */
  minBytes?: number;
  /** @defaultValue {@link DEFAULT_RESULT_HANDLE_SPILL_BYTES} (128 MiB) */
  spillBytes?: number;
  /** @defaultValue {@link DEFAULT_RESULT_HANDLE_CHUNK_BYTES} (1 MiB) */
  chunkBytes?: number;
  /** @defaultValue {@link DEFAULT_RESULT_HANDLE_READ_MAX_BYTES} (8 MiB) */
  readMaxBytes?: number;
  /** @defaultValue {@link DEFAULT_RESULT_HANDLE_MAX_PER_RUN} (64) */
  maxPerRun?: number;
  /** @defaultValue {@link DEFAULT_RESULT_HANDLE_MAX_MEMORY_BYTES} (512 MiB) */
  maxMemoryBytes?: number;
  /** @defaultValue {@link DEFAULT_RESULT_HANDLE_MAX_GROUPS} (10,000) */
  maxGroups?: number;
  /** Where each run's temp folder is made. @defaultValue `os.tmpdir()` */
  tempDir?: string;
  /**
   * Folders whose files a tool result may name: a result that is a lone `resource_link` to a
   * `file://` URI inside one of them is held as a `lines` handle streamed from that file, so a
   * result of any size never crosses the MCP transport or enters memory whole (docs/data.md).
   * Only for servers that share this machine's file system and that you trust to name those
   * folders' files; a link outside them stays the plain `resource_link` value.
   * @defaultValue `[]` (no file is ever read)
   */
  linkRoots?: readonly string[];
}

type Resolved = Required<Omit<ResultHandleOptions, 'linkRoots'>> & { linkRoots: readonly string[] };

/** Resolves and checks the options once (a bad value is the developer's fault). */
export function resolveResultHandleOptions(options: ResultHandleOptions = {}): Resolved {
  const positive = (
    field: keyof ResultHandleOptions,
    value: number | undefined,
    fallback: number,
  ): number => {
    if (value === undefined) return fallback;
    if (!Number.isSafeInteger(value) || value < 1)
      throw new CodecallError(
        'INVALID_ARGUMENT',
        `resultHandles.${field} must be a positive integer; got ${String(value)}.`,
        {
          details: { field: `resultHandles.${field}`, value },
        },
      );
    return value;
  };
  return {
    minBytes: positive('minBytes', options.minBytes, DEFAULT_RESULT_HANDLE_MIN_BYTES),
    spillBytes: positive('spillBytes', options.spillBytes, DEFAULT_RESULT_HANDLE_SPILL_BYTES),
    chunkBytes: positive('chunkBytes', options.chunkBytes, DEFAULT_RESULT_HANDLE_CHUNK_BYTES),
    readMaxBytes: positive('readMaxBytes', options.readMaxBytes, DEFAULT_RESULT_HANDLE_READ_MAX_BYTES),
    maxPerRun: positive('maxPerRun', options.maxPerRun, DEFAULT_RESULT_HANDLE_MAX_PER_RUN),
    maxMemoryBytes: positive(
      'maxMemoryBytes',
      options.maxMemoryBytes,
      DEFAULT_RESULT_HANDLE_MAX_MEMORY_BYTES,
    ),
    maxGroups: positive('maxGroups', options.maxGroups, DEFAULT_RESULT_HANDLE_MAX_GROUPS),
    tempDir: options.tempDir ?? tmpdir(),
    linkRoots: resolveLinkRoots(options.linkRoots),
  };
}

function resolveLinkRoots(roots: readonly string[] | undefined): readonly string[] {
  if (roots === undefined) return [];
  if (!Array.isArray(roots) || roots.some((root) => typeof root !== 'string' || !isAbsolute(root)))
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `resultHandles.linkRoots must be an array of absolute folder paths; got ${JSON.stringify(roots)?.slice(0, 200)}.`,
      { details: { field: 'resultHandles.linkRoots', value: roots } },
    );
  return [...roots];
}

/** One held result. */
interface Entry {
  descriptor: HandleDescriptor;
  /** The parsed value (an array/object), kept in memory. */
  value?: unknown;
  /** The lines of a text result, kept in memory. */
  lines?: string[];
  /** The temp file of a spilled result (its JSON text, or the text of a `lines` result), or a linked file. */
  file?: string;
  /** A linked file's bytes when it was held (rows are read up to there only). */
  fileBytes?: number;
  /** Where the last streamed slice of a spilled `lines` result stopped: row index and byte offset. */
  cursor?: { row: number; byte: number };
}

/** `{ field: value }`: a row matches when each field (a key, or a JSON pointer `/a/b`) equals its value. */
type Where = Record<string, string | number | boolean | null>;

const MAX_KEYS = 40;
const MAX_POINTER_CHARS = 1_000;

/** A model-facing error of a handle call (the script sees its message). */
function refuse(message: string): CodecallError<'INVALID_ARGUMENT'> {
  return new CodecallError('INVALID_ARGUMENT', message, { details: { field: 'handle' } });
}

/** The value at an RFC 6901 JSON pointer, own properties only (`undefined` when absent). */
export function atPointer(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  if (typeof pointer !== 'string' || !pointer.startsWith('/') || pointer.length > MAX_POINTER_CHARS)
    throw refuse(
      `A JSON pointer starts with "/" (e.g. "/items/0/amount") and has at most ${MAX_POINTER_CHARS} characters; got ${JSON.stringify(String(pointer).slice(0, 60))}.`,
    );
  let at: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (Array.isArray(at)) {
      if (!/^(0|[1-9]\d*)$/.test(key)) return undefined;
      at = at[Number(key)];
    } else if (typeof at === 'object' && at !== null && Object.hasOwn(at, key)) {
      at = (at as Record<string, unknown>)[key];
    } else return undefined;
  }
  return at;
}

/** A row's field: a key (own property) or a JSON pointer into the row. */
function fieldOf(row: unknown, field: string): unknown {
  if (field.startsWith('/')) return atPointer(row, field);
  if (typeof row === 'object' && row !== null && !Array.isArray(row) && Object.hasOwn(row, field))
    return (row as Record<string, unknown>)[field];
  return undefined;
}

function checkField(field: unknown, name: string): string {
  if (typeof field !== 'string' || field === '' || field.length > MAX_POINTER_CHARS)
    throw refuse(`${name} takes a field: a key such as "amount" or a JSON pointer such as "/cost/usd".`);
  return field;
}

function checkWhere(where: unknown): Where | undefined {
  if (where === undefined || where === null) return undefined;
  if (typeof where !== 'object' || Array.isArray(where))
    throw refuse(
      'where is an object of field → value, e.g. { where: { status: "approved", "/meta/region": "EU" } }.',
    );
  for (const [field, value] of Object.entries(where)) {
    checkField(field, 'where');
    if (value !== null && typeof value === 'object')
      throw refuse(
        `where.${field} must be a string, number, boolean or null (rows are matched by equality).`,
      );
  }
  return where as Where;
}

function matches(row: unknown, where: Where | undefined): boolean {
  if (where === undefined) return true;
  for (const field in where) if (fieldOf(row, field) !== where[field]) return false;
  return true;
}

/** A line of a `lines` result: its JSON value when it is a JSON object or array, else the text. */
function rowOfLine(line: string): unknown {
  const first = line.charCodeAt(0);
  if (first === 123 /* { */ || first === 91 /* [ */) {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      return line;
    }
  }
  return line;
}

function keysOf(value: unknown): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [];
  return Object.keys(value).slice(0, MAX_KEYS);
}

/** The pointer of the largest array directly under an object (its rows), `''` for none. */
function rowsPointerOf(value: Record<string, unknown>): string {
  let best = '';
  let bestLength = -1;
  for (const key of Object.keys(value)) {
    const item = value[key];
    if (Array.isArray(item) && item.length > bestLength) {
      best = `/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`;
      bestLength = item.length;
    }
  }
  return best;
}

/** The held results of one run. Make one per run with {@link HandleTable.open}; close it when the run ends. */
export class HandleTable {
  readonly #options: Resolved;
  readonly #entries = new Map<string, Entry>();
  #memoryBytes = 0;
  #dir: Promise<string> | undefined;
  #closed = false;
  readonly #onParsed: ((tool: string, value: unknown) => void) | undefined;

  private constructor(options: Resolved, onParsed: ((tool: string, value: unknown) => void) | undefined) {
    this.#options = options;
    this.#onParsed = onParsed;
  }

  /**
   * A table for one run. `onParsed` sees each held JSON result's value once, as parsed to hold
   * it (learned result shapes sample it); it must not keep it, and what it throws is ignored.
   */
  static open(options: Resolved, onParsed?: (tool: string, value: unknown) => void): HandleTable {
    return new HandleTable(options, onParsed);
  }

  /** Results held now (for tests). */
  get size(): number {
    return this.#entries.size;
  }

  /** The run's temp folder, once a result was spilled (for tests). */
  async spillFolder(): Promise<string | undefined> {
    return this.#dir;
  }

  /**
   * `value` itself when it is smaller than `minBytes` (or no JSON data); otherwise a
   * {@link HeldResult} the sandbox gets as a handle.
   */
  async hold(tool: string, value: unknown): Promise<unknown> {
    if (this.#closed) return value;
    let text: string;
    let bytes: number;
    if (JsonText.isInstance(value)) {
      if (value.text.length < this.#options.minBytes / 3) return value;
      bytes = value.bytes;
      text = value.text;
    } else if (typeof value === 'string') {
      if (value.length < this.#options.minBytes / 3) return value;
      bytes = utf8ByteLength(value);
      text = value;
    } else {
      if (typeof value !== 'object' || value === null) return value;
      if (this.#options.linkRoots.length > 0) {
        const file = await this.#linkedFile(value);
        if (file !== undefined) return this.#registerLinked(tool, file);
      }
      let json: string | undefined;
      try {
        json = JSON.stringify(value) as string | undefined;
      } catch {
        return value;
      }
      if (json === undefined || json.length < this.#options.minBytes / 3) return value;
      bytes = utf8ByteLength(json);
      text = json;
    }
    if (bytes < this.#options.minBytes) return value;
    return this.#register(tool, text, bytes, JsonText.isInstance(value) || typeof value !== 'string');
  }

  async #register(tool: string, text: string, bytes: number, maybeJson: boolean): Promise<HeldResult> {
    if (this.#entries.size >= this.#options.maxPerRun)
      throw refuse(
        `This run already holds ${this.#options.maxPerRun} large results as handles (the most one run may hold, DEFAULT_RESULT_HANDLE_MAX_PER_RUN). Reduce each result before the next call (count/sum/groupBy/filter), or split the work over several runs.`,
      );
    let value: unknown;
    let isJson = false;
    if (maybeJson) {
      try {
        value = JSON.parse(text) as unknown;
        isJson = typeof value === 'object' && value !== null;
        if (isJson && this.#onParsed) {
          try {
            this.#onParsed(tool, value);
          } catch {
            // Learning never fails a call.
          }
        }
      } catch {
        isJson = false;
      }
    }
    const id = randomBytes(16).toString('base64url');
    const entry: Entry = {
      descriptor: { id, tool, bytes, kind: 'lines', rowsAt: '', length: 0, keys: [], spilled: false },
    };
    if (isJson) {
      if (Array.isArray(value)) {
        entry.descriptor.kind = 'array';
        entry.descriptor.length = value.length;
        entry.descriptor.keys = keysOf(value[0]);
      } else {
        const object = value as Record<string, unknown>;
        const rowsAt = rowsPointerOf(object);
        const rows = rowsAt === '' ? [] : (atPointer(object, rowsAt) as unknown[]);
        entry.descriptor.kind = 'object';
        entry.descriptor.rowsAt = rowsAt;
        entry.descriptor.length = rows.length;
        entry.descriptor.keys = keysOf(object);
      }
    } else {
      const lines = text.split('\n');
      if (lines.at(-1) === '') lines.pop();
      entry.descriptor.length = lines.length;
      entry.descriptor.keys = keysOf(lines.length > 0 ? rowOfLine(lines[0]!) : undefined);
      entry.lines = lines;
    }
    const spill =
      bytes >= this.#options.spillBytes || this.#memoryBytes + bytes > this.#options.maxMemoryBytes;
    if (spill) {
      this.#dir ??= mkdtemp(join(this.#options.tempDir, 'codecall-run-'));
      const file = join(await this.#dir, `${this.#entries.size}.${isJson ? 'json' : 'txt'}`);
      await writeFile(file, text, { mode: 0o600 });
      entry.file = file;
      entry.descriptor.spilled = true;
      delete entry.lines;
    } else {
      if (isJson) entry.value = value;
      this.#memoryBytes += bytes;
    }
    if (this.#closed) {
      // The run ended while the file was written: nothing of it stays.
      await this.close();
      throw refuse('The run ended.');
    }
    this.#entries.set(id, entry);
    return new HeldResult(entry.descriptor);
  }

  /**
   * The real path of the file a lone `resource_link` result names, when it is a regular file
   * inside one of `linkRoots` (symbolic links resolved first, so a link cannot lead out).
   */
  async #linkedFile(value: object): Promise<string | undefined> {
    const link = value as { type?: unknown; uri?: unknown };
    if (link.type !== 'resource_link' || typeof link.uri !== 'string' || !link.uri.startsWith('file:'))
      return undefined;
    let path: string;
    try {
      path = await realpath(fileURLToPath(link.uri));
    } catch {
      return undefined;
    }
    for (const root of this.#options.linkRoots) {
      const real = await realpath(root).catch(() => undefined);
      if (real === undefined) continue;
      const inside = relative(real, path);
      if (inside !== '' && !inside.startsWith('..') && !isAbsolute(inside)) return path;
    }
    return undefined;
  }

  /** Holds a linked file as a `lines` handle: one pass counts its lines (each at most `readMaxBytes`). */
  async #registerLinked(tool: string, file: string): Promise<HeldResult> {
    if (this.#entries.size >= this.#options.maxPerRun)
      throw refuse(
        `This run already holds ${this.#options.maxPerRun} large results as handles (the most one run may hold, DEFAULT_RESULT_HANDLE_MAX_PER_RUN). Reduce each result before the next call, or split the work over several runs.`,
      );
    const handle = await open(file, 'r');
    let bytes: number;
    try {
      const stat = await handle.stat();
      if (!stat.isFile()) throw refuse(`The file ${tool} linked to is not a regular file.`);
      bytes = stat.size;
    } finally {
      await handle.close();
    }
    const id = randomBytes(16).toString('base64url');
    const entry: Entry = {
      descriptor: { id, tool, bytes, kind: 'lines', rowsAt: '', length: 0, keys: [], spilled: true },
      file,
      fileBytes: bytes,
    };
    const { rows: length, first } = await this.#scan(entry, { row: 0, byte: 0 });
    entry.descriptor.length = length;
    entry.descriptor.keys = keysOf(first === undefined ? undefined : rowOfLine(first));
    if (this.#closed) throw refuse('The run ended.');
    this.#entries.set(id, entry);
    return new HeldResult(entry.descriptor);
  }

  /**
   * Reads the lines of a file result from `from` (a row and the byte where it starts): calls
   * `visit` with each line, its row and the byte where it starts, until it returns false. Without `visit` it
   * only counts the lines (no line is decoded but the first). A line longer than
   * `readMaxBytes` is refused, so no line is ever buffered past that; at most the bytes the file
   * had when it was held are read. Each read is at most `chunkBytes`; between reads the event
   * loop runs.
   */
  async #scan(
    entry: Entry,
    from: { row: number; byte: number },
    visit?: (line: string, row: number, byteAt: number) => boolean,
  ): Promise<{ rows: number; first: string | undefined }> {
    const maxLine = this.#options.readMaxBytes;
    const end = entry.fileBytes ?? Infinity;
    const handle = await open(entry.file!, 'r');
    const buffer = Buffer.allocUnsafe(Math.max(65_536, this.#options.chunkBytes));
    const decode = (line: Buffer): string =>
      line.toString(
        'utf8',
        0,
        line.length > 0 && line[line.length - 1] === 13 ? line.length - 1 : line.length,
      );
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    let position = from.byte;
    let row = from.row;
    let lineAt = from.byte;
    let first: string | undefined;
    try {
      while (position < end) {
        if (this.#closed) throw refuse('The run ended.');
        const { bytesRead } = await handle.read(buffer, 0, Math.min(buffer.length, end - position), position);
        if (bytesRead === 0) break;
        let start = 0;
        for (let newline = buffer.indexOf(10, 0); newline !== -1 && newline < bytesRead;) {
          if (pendingBytes + newline - start > maxLine) throw this.#longLine(entry, row);
          if (visit !== undefined || first === undefined) {
            let line = buffer.subarray(start, newline);
            if (pendingBytes > 0) line = Buffer.concat([...pending, line]);
            const text = decode(line);
            first ??= text;
            if (visit !== undefined && !visit(text, row, lineAt)) return { rows: row + 1, first };
          }
          pending = [];
          pendingBytes = 0;
          row++;
          start = newline + 1;
          lineAt = position + start;
          newline = buffer.indexOf(10, start);
        }
        if (start < bytesRead) {
          pendingBytes += bytesRead - start;
          if (pendingBytes > maxLine) throw this.#longLine(entry, row);
          if (visit !== undefined || first === undefined)
            pending.push(Buffer.from(buffer.subarray(start, bytesRead)));
        }
        position += bytesRead;
      }
      if (pendingBytes > 0) {
        const text = decode(Buffer.concat(pending));
        first ??= text;
        if (visit !== undefined) visit(text, row, lineAt);
        row++;
      }
      return { rows: row, first };
    } finally {
      await handle.close();
    }
  }

  #longLine(entry: Entry, row: number): CodecallError<'INVALID_ARGUMENT'> {
    return refuse(
      `Line ${row + 1} of this ${entry.descriptor.tool} result is longer than ${this.#options.readMaxBytes} bytes (readMaxBytes), the longest row a handle reads.`,
    );
  }

  #entry(id: unknown): Entry {
    const entry = typeof id === 'string' ? this.#entries.get(id) : undefined;
    if (entry === undefined)
      throw refuse(
        'Not a result handle of this run: a handle lives only in the run whose tool call made it (it cannot be made from a number or kept across runs). Call the tool again in this run.',
      );
    return entry;
  }

  /** The whole held value (a spilled one is read back). */
  async #valueOf(entry: Entry): Promise<unknown> {
    if (entry.value !== undefined) return entry.value;
    if (entry.lines !== undefined) return entry.lines.join('\n');
    if (entry.fileBytes !== undefined && entry.fileBytes > this.#options.maxMemoryBytes)
      throw refuse(
        `This ${entry.descriptor.tool} result is a file of ${entry.fileBytes} bytes, more than a run reads whole (maxMemoryBytes ${this.#options.maxMemoryBytes}). Reduce it on the host (count/sum/groupBy, filter with where) or iterate its rows.`,
      );
    const text = await readFile(entry.file!, 'utf8');
    if (entry.descriptor.kind === 'lines') return text;
    return JSON.parse(text) as unknown;
  }

  /**
   * Calls `visit` with each row at `path` from index `start` (rows of a `lines` result are its
   * lines, a JSON object or array line parsed); stops when it returns false. Yields the event
   * loop every {@link DEFAULT_RESULT_HANDLE_YIELD_ROWS} rows.
   */
  async #eachRow(
    entry: Entry,
    path: string,
    start: number,
    visit: (row: unknown, index: number) => boolean,
  ): Promise<void> {
    let seen = 0;
    const step = async (): Promise<void> => {
      if (++seen % DEFAULT_RESULT_HANDLE_YIELD_ROWS === 0) {
        await yieldLoop();
        if (this.#closed) throw refuse('The run ended.');
      }
    };
    if (entry.descriptor.kind === 'lines') {
      if (path !== '') throw refuse('A text result has lines, not fields: leave out the path (or use at()).');
      if (entry.lines !== undefined) {
        for (let index = start; index < entry.lines.length; index++) {
          if (!visit(rowOfLine(entry.lines[index]!), index)) return;
          await step();
        }
        return;
      }
      await this.#streamLines(entry, start, (line, index) => visit(rowOfLine(line), index));
      return;
    }
    const rows = atPointer(await this.#valueOf(entry), path);
    if (!Array.isArray(rows))
      throw refuse(
        `There are no rows at ${JSON.stringify(path)} of this ${entry.descriptor.tool} result (it is ${rows === null ? 'null' : typeof rows}). Use at("/pointer/to/an/array"); its keys are ${JSON.stringify(entry.descriptor.keys)}.`,
      );
    for (let index = start; index < rows.length; index++) {
      if (!visit(rows[index], index)) return;
      await step();
    }
  }

  /** Streams the lines of a file result from row `start`, resuming at the last cursor when it fits. */
  async #streamLines(
    entry: Entry,
    start: number,
    visit: (line: string, index: number) => boolean,
  ): Promise<void> {
    const cursor =
      entry.cursor !== undefined && entry.cursor.row <= start ? entry.cursor : { row: 0, byte: 0 };
    await this.#scan(entry, cursor, (line, row, byteAt) => {
      if (row < start) return true;
      if (visit(line, row)) return true;
      // The row that stopped the visit is not consumed: the next slice starts at it.
      entry.cursor = { row, byte: byteAt };
      return false;
    });
  }

  /** Answers one call a handle's method made (`{ handle, op, … }`). */
  async answer(args: unknown): Promise<unknown> {
    if (typeof args !== 'object' || args === null) throw refuse('A handle call takes { handle, op }.');
    const call = args as Record<string, unknown>;
    const entry = this.#entry(call.handle);
    const path = call.path === undefined ? entry.descriptor.rowsAt : call.path;
    if (typeof path !== 'string' || (path !== '' && !path.startsWith('/')))
      throw refuse('path is a JSON pointer, e.g. "/items" ("" for the whole result).');
    const where = checkWhere(call.where);
    const { chunkBytes, readMaxBytes, maxGroups } = this.#options;
    switch (call.op) {
      case 'value': {
        const pointer = typeof call.pointer === 'string' ? call.pointer : '';
        if (pointer === '' && entry.descriptor.bytes > readMaxBytes)
          throw refuse(
            `This ${entry.descriptor.tool} result has ${entry.descriptor.bytes} bytes, more than a handle's value() copies (${readMaxBytes}). Reduce it on the host instead: count/sum/min/max/groupBy, filter or pick with where, slice, or for await (const row of handle).`,
          );
        const found = atPointer(await this.#valueOf(entry), pointer);
        const size = found === undefined ? 0 : (JSON.stringify(found)?.length ?? 0);
        if (size > readMaxBytes)
          throw refuse(
            `The value at ${JSON.stringify(pointer)} has about ${size} bytes, more than value() copies (${readMaxBytes}). Iterate or reduce it instead.`,
          );
        return found;
      }
      case 'slice': {
        const start = typeof call.start === 'number' && call.start > 0 ? Math.floor(call.start) : 0;
        const end = typeof call.end === 'number' ? Math.floor(call.end) : Infinity;
        const rows: unknown[] = [];
        let bytes = 0;
        let next: number | null = null;
        await this.#eachRow(entry, path, start, (row, index) => {
          if (index >= end) return false;
          if (!matches(row, where)) return true;
          const size = (JSON.stringify(row)?.length ?? 4) + 1;
          if (rows.length > 0 && bytes + size > chunkBytes) {
            next = index;
            return false;
          }
          rows.push(row);
          bytes += size;
          return true;
        });
        return { rows, next };
      }
      case 'count': {
        let count = 0;
        await this.#eachRow(entry, path, 0, (row) => {
          if (matches(row, where)) count++;
          return true;
        });
        return count;
      }
      case 'sum':
      case 'min':
      case 'max': {
        const field = checkField(call.field, call.op);
        let sum = 0;
        let best: number | null = null;
        await this.#eachRow(entry, path, 0, (row) => {
          if (!matches(row, where)) return true;
          const value = fieldOf(row, field);
          if (typeof value !== 'number' || !Number.isFinite(value)) return true;
          sum += value;
          if (best === null || (call.op === 'min' ? value < best : value > best)) best = value;
          return true;
        });
        return call.op === 'sum' ? sum : best;
      }
      case 'pick':
      case 'filter': {
        const fields =
          call.op === 'pick'
            ? Array.isArray(call.fields)
              ? call.fields.map((f) => checkField(f, 'pick'))
              : undefined
            : undefined;
        if (call.op === 'pick' && (fields === undefined || fields.length === 0))
          throw refuse(
            'pick takes the fields to keep, e.g. handle.pick(["id", "amount"], { where: { status: "open" } }).',
          );
        const limit = typeof call.limit === 'number' && call.limit >= 0 ? Math.floor(call.limit) : Infinity;
        const rows: unknown[] = [];
        let bytes = 0;
        const budget = call.op === 'filter' ? this.#options.spillBytes * 4 : readMaxBytes;
        await this.#eachRow(entry, path, 0, (row) => {
          if (rows.length >= limit) return false;
          if (!matches(row, where)) return true;
          const kept =
            fields === undefined ? row : Object.fromEntries(fields.map((f) => [f, fieldOf(row, f) ?? null]));
          bytes += (JSON.stringify(kept)?.length ?? 4) + 1;
          if (bytes > budget)
            throw refuse(
              `${call.op} would copy more than ${budget} bytes into the script. Narrow it with where or a limit, or reduce on the host (count/sum/groupBy).`,
            );
          rows.push(kept);
          return true;
        });
        if (call.op === 'pick' || bytes < this.#options.minBytes) return rows;
        return this.#register(
          `${entry.descriptor.tool} (filtered)`,
          JSON.stringify(rows),
          utf8ByteLength(JSON.stringify(rows)),
          true,
        );
      }
      case 'groupBy': {
        const field = checkField(call.field, 'groupBy');
        const summed = call.sum === undefined ? undefined : checkField(call.sum, 'groupBy sum');
        const groups = new Map<string, { count: number; sum?: number }>();
        await this.#eachRow(entry, path, 0, (row) => {
          if (!matches(row, where)) return true;
          const value = fieldOf(row, field);
          const key = typeof value === 'string' ? value : JSON.stringify(value ?? null);
          let group = groups.get(key);
          if (group === undefined) {
            if (groups.size >= maxGroups)
              throw refuse(
                `groupBy("${field}") has more than ${maxGroups} groups (DEFAULT_RESULT_HANDLE_MAX_GROUPS). Group by a field with fewer values, or filter first with where.`,
              );
            group = summed === undefined ? { count: 0 } : { count: 0, sum: 0 };
            groups.set(key, group);
          }
          group.count++;
          if (summed !== undefined) {
            const amount = fieldOf(row, summed);
            if (typeof amount === 'number' && Number.isFinite(amount)) group.sum! += amount;
          }
          return true;
        });
        return Object.fromEntries(groups);
      }
      default:
        throw refuse(
          `Unknown handle operation ${JSON.stringify(String(call.op)).slice(0, 40)}: use value, slice, count, pick, filter, sum, min, max or groupBy.`,
        );
    }
  }

  /**
   * `args` with each handle marker (`{"$codecall_handle": id}`) replaced by its held value, on
   * the host; the same object when it holds none. An id that is not this run's is refused.
   */
  async substitute(args: unknown): Promise<unknown> {
    const walk = async (value: unknown, depth: number): Promise<unknown> => {
      if (typeof value !== 'object' || value === null || depth > DEFAULT_RESULT_HANDLE_MAX_ARGS_DEPTH)
        return value;
      if (Array.isArray(value)) {
        let changed: unknown[] | undefined;
        for (let index = 0; index < value.length; index++) {
          const next = await walk(value[index], depth + 1);
          if (next !== value[index]) (changed ??= [...value])[index] = next;
        }
        return changed ?? value;
      }
      const object = value as Record<string, unknown>;
      if (Object.hasOwn(object, HANDLE_MARKER_KEY))
        return this.#valueOf(this.#entry(object[HANDLE_MARKER_KEY]));
      let changed: Record<string, unknown> | undefined;
      for (const key of Object.keys(object)) {
        const next = await walk(object[key], depth + 1);
        if (next !== object[key]) (changed ??= { ...object })[key] = next;
      }
      return changed ?? value;
    };
    return walk(args, 0);
  }

  /** Drops every held result and removes the run's temp folder (idempotent). */
  async close(): Promise<void> {
    this.#closed = true;
    this.#entries.clear();
    this.#memoryBytes = 0;
    const dir = this.#dir;
    if (dir === undefined) return;
    await rm(await dir, { recursive: true, force: true }).catch(() => {});
  }
}
