/**
 * @module
 * The one rendering of a call that waits for approval, as a person reads it: the terminal prompt
 * of `codecall run` / `exec`, the elicitation message of `codecall serve` and a waiting job's
 * line in `codecall jobs` all use {@link renderApprovalCall} or {@link renderApprovalArguments}.
 *
 * A prompt that cuts the arguments' JSON at a length can hide a field past the cut (`id:
 * "ALL-RECORDS"` behind a long note), so every top-level field is named: values are shortened,
 * fields past a limit are listed by name, and the text says what was shortened. Control and
 * bidirectional-formatting characters (U+202E reorders what follows it on screen) are shown as
 * `\uXXXX` escapes, never sent.
 */
import {
  DEFAULT_APPROVAL_PROMPT_MAX_FIELDS,
  DEFAULT_APPROVAL_PROMPT_MAX_NAME_CHARS,
  DEFAULT_APPROVAL_PROMPT_MAX_NAMED_FIELDS,
  DEFAULT_APPROVAL_PROMPT_MAX_VALUE_CHARS,
} from '../config/defaults.js';

/** Bounds of {@link renderApprovalArguments}. */
export interface ApprovalTextLimits {
  /**
   * Top-level fields shown with their values; the rest are named without values.
   * @defaultValue {@link DEFAULT_APPROVAL_PROMPT_MAX_FIELDS}
   */
  maxFields?: number;
  /**
   * Characters of one value's JSON shown; a longer value is cut.
   * @defaultValue {@link DEFAULT_APPROVAL_PROMPT_MAX_VALUE_CHARS}
   */
  maxValueChars?: number;
  /**
   * Characters of one field name shown; a longer name is cut.
   * @defaultValue {@link DEFAULT_APPROVAL_PROMPT_MAX_NAME_CHARS}
   */
  maxNameChars?: number;
  /**
   * Names listed of the fields past `maxFields`; the count of the rest is given.
   * @defaultValue {@link DEFAULT_APPROVAL_PROMPT_MAX_NAMED_FIELDS}
   */
  maxNamedFields?: number;
}

/** The arguments of a call, rendered for a person. */
export interface RenderedApprovalArguments {
  /** The arguments: their JSON when nothing was shortened. */
  text: string;
  /** `""`, or ` [shortened: …]` saying what was shortened. */
  note: string;
}

/**
 * C0 and C1 controls, DEL, the soft hyphen, bidirectional marks, embeddings, overrides and
 * isolates, zero-width and invisible characters, line and paragraph separators, the BOM,
 * interlinear annotation marks, and lone surrogates.
 */
const INVISIBLE =
  // Each listed mark is replaced on its own, combining or not: that is the point.
  // eslint-disable-next-line no-control-regex, no-misleading-character-class
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\ufff9-\ufffb]|[\ud800-\udfff]/gu;

/**
 * Returns `text` with control, bidirectional-formatting and invisible characters replaced by
 * their `\uXXXX` escapes (JSON's own spelling: a JSON text stays valid JSON).
 *
 * @example
 * ```ts
 * escapeInvisible('files.remove("\u202Egpj.exe")'); // 'files.remove("\\u202egpj.exe")'
 * ```
 */
export function escapeInvisible(text: string): string {
  return text.replace(INVISIBLE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function toJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** At most `max` characters of JSON text, never ending inside an escape or a surrogate pair. */
function cutJson(json: string, max: number): string {
  let end = 0;
  while (end < json.length) {
    const step = json[end] !== '\\' ? 1 : json[end + 1] === 'u' ? 6 : 2;
    if (end + step > max) break;
    end += step;
  }
  const last = json.charCodeAt(end - 1);
  return json.slice(0, last >= 0xd800 && last < 0xdc00 ? end - 1 : end);
}

/**
 * A value's JSON, cut to about `max` characters when longer: a string keeps its quotes
 * (`"abc…" (5000 characters)`), other values end with `… (N characters of JSON)`.
 */
function renderValue(value: unknown, max: number): { text: string; cut: boolean } {
  const json = toJson(value);
  if (json.length <= max) return { text: json, cut: false };
  if (typeof value === 'string')
    return { text: `${cutJson(json, max - 1)}…" (${value.length} characters)`, cut: true };
  return { text: `${cutJson(json, max)}… (${json.length} characters of JSON)`, cut: true };
}

/** A field name as a JSON string, cut to `max` characters (`"abc…"`) when longer. */
function renderName(name: string, max: number): { text: string; cut: boolean } {
  if (name.length <= max) return { text: JSON.stringify(name), cut: false };
  return { text: `${JSON.stringify(name.slice(0, max)).slice(0, -1)}…"`, cut: true };
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/**
 * Renders a call's arguments for an approval prompt (see the module comment): their JSON when
 * every value fits, otherwise every top-level field named, long values cut, fields past
 * `maxFields` listed by name, and a note saying what was shortened.
 *
 * @example
 * ```ts
 * const { text, note } = renderApprovalArguments({ note: 'x'.repeat(5000), id: 'ALL-RECORDS' });
 * // text: {"note":"xxx…" (5000 characters),"id":"ALL-RECORDS"}
 * // note: ' [shortened: the value of "note"]'
 * ```
 */
export function renderApprovalArguments(
  args: unknown,
  limits: ApprovalTextLimits = {},
): RenderedApprovalArguments {
  const maxFields = limits.maxFields ?? DEFAULT_APPROVAL_PROMPT_MAX_FIELDS;
  const maxValueChars = limits.maxValueChars ?? DEFAULT_APPROVAL_PROMPT_MAX_VALUE_CHARS;
  const maxNameChars = limits.maxNameChars ?? DEFAULT_APPROVAL_PROMPT_MAX_NAME_CHARS;
  const maxNamedFields = limits.maxNamedFields ?? DEFAULT_APPROVAL_PROMPT_MAX_NAMED_FIELDS;
  const shortened: string[] = [];
  let text: string;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    const value = renderValue(args, maxValueChars * maxFields);
    text = value.text;
    if (value.cut) shortened.push('the arguments');
  } else {
    const record = args as Record<string, unknown>;
    const keys = Object.keys(record);
    const parts: string[] = [];
    const cutValues: string[] = [];
    let cutNames = 0;
    for (const key of keys.slice(0, maxFields)) {
      const name = renderName(key, maxNameChars);
      const value = renderValue(record[key], maxValueChars);
      if (name.cut) cutNames++;
      if (value.cut) cutValues.push(name.text);
      parts.push(`${name.text}:${value.text}`);
    }
    const rest = keys.slice(maxFields);
    if (rest.length > 0) {
      const named = rest.slice(0, maxNamedFields).map((key) => {
        const name = renderName(key, maxNameChars);
        if (name.cut) cutNames++;
        return name.text;
      });
      const unnamed = rest.length - named.length;
      parts.push(
        `… and ${plural(rest.length, 'more field')}: ${named.join(', ')}` +
          (unnamed > 0 ? `, and ${unnamed} more not named here` : ''),
      );
      shortened.push(
        `${plural(rest.length, 'field')} past the first ${maxFields} ${rest.length === 1 ? 'is' : 'are'} named without ${rest.length === 1 ? 'its value' : 'their values'}` +
          (unnamed > 0 ? ` (${unnamed} not named)` : ''),
      );
    }
    if (cutValues.length > 0)
      shortened.unshift(`the value${cutValues.length === 1 ? '' : 's'} of ${cutValues.join(', ')}`);
    if (cutNames > 0) shortened.push(`${plural(cutNames, 'field name')} cut to ${maxNameChars} characters`);
    text = `{${parts.join(',')}}`;
  }
  return {
    text: escapeInvisible(text),
    note: shortened.length > 0 ? escapeInvisible(` [shortened: ${shortened.join('; ')}]`) : '',
  };
}

/**
 * A call as an approval prompt names it: `server.tool({…})`, plus the note of
 * {@link renderApprovalArguments} when something was shortened; invisible characters escaped.
 *
 * @example
 * ```ts
 * renderApprovalCall({ tool: 'files.remove', args: { path: '/tmp/a' } }); // 'files.remove({"path":"/tmp/a"})'
 * ```
 */
export function renderApprovalCall(
  call: { tool: string; args: unknown },
  limits: ApprovalTextLimits = {},
): string {
  const { text, note } = renderApprovalArguments(call.args, limits);
  return `${escapeInvisible(call.tool)}(${text})${note}`;
}
