/**
 * @module
 * Cold-start edges of the tool graph, inferred from the tools themselves before any usage is
 * recorded: tool A → tool B when an output field of A (from its `outputSchema`, or named after
 * "returns…" in its description) is an input parameter of B, or when B's description or a
 * parameter description names A (`result_id: the id returned by bing_search`). Kept as indexes
 * that are updated per tool, so edges are derived on read and a catalog change costs only the
 * changed tools. Pure.
 */
import type { JsonSchema } from '../types.js';

/** Targets one field may link to before it counts as too generic to mean anything. */
export const DEFAULT_MAX_INFERRED_FANOUT = 8;
/** Properties read from one schema (all levels together). */
const MAX_SCHEMA_PROPERTIES = 200;
/** Nesting levels of a schema that are read. */
const MAX_SCHEMA_DEPTH = 3;

/** Field names that say nothing about which tool produced them. */
const GENERIC_FIELDS: ReadonlySet<string> = new Set(
  'id ids name type data value values text limit offset page pagesize cursor format query q result results status message content description title input output options params args body success error count size sort order'.split(
    ' ',
  ),
);

/** One property of a schema. */
export interface SchemaProperty {
  name: string;
  description: string;
}

/**
 * The properties of an (untrusted) JSON Schema object, nested objects and array items included,
 * bounded in depth and count.
 */
export function schemaProperties(schema: unknown, depth = 0, out: SchemaProperty[] = []): SchemaProperty[] {
  if (depth >= MAX_SCHEMA_DEPTH || typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
    return out;
  }
  const s = schema as Record<string, unknown>;
  const properties = s.properties;
  if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
    for (const [name, value] of Object.entries(properties as Record<string, unknown>)) {
      if (out.length >= MAX_SCHEMA_PROPERTIES) return out;
      const description =
        typeof value === 'object' &&
        value !== null &&
        typeof (value as { description?: unknown }).description === 'string'
          ? (value as { description: string }).description
          : '';
      out.push({ name, description });
      schemaProperties(value, depth + 1, out);
    }
  }
  if (typeof s.items === 'object') schemaProperties(s.items, depth + 1, out);
  return out;
}

/** `userId`, `user_id`, `User-ID` → `userid`. */
export function normalizeField(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/** Identifier-looking words (with `_`, `.`, `-`, `::` or a case hump) in free text, normalised. */
function identifiersIn(text: string): string[] {
  const out: string[] = [];
  // Most descriptions are plain prose ("e.g." aside): skip them unless something identifier-like is there.
  if (!/_|::|[a-z][A-Z]|[A-Za-z0-9]{2}[.-][A-Za-z]{2}/.test(text)) return out;
  for (const raw of text.split(/\s+/)) {
    // Trim surrounding punctuation ("(see bing_search).") and keep word-internal separators.
    const word = raw.replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '');
    if (word.length < 3 || !/^[A-Za-z]/.test(word)) continue;
    if (/^[A-Za-z0-9]+(?:(?:[_.-]|::)[A-Za-z0-9]+)+$/.test(word) || /^[a-z]+[A-Z][A-Za-z0-9]*$/.test(word)) {
      out.push(word.toLowerCase());
    }
  }
  return out;
}

/** Field names a description says the tool returns ("Returns the channel_id and ts"). */
function returnedFields(description: string): string[] {
  const out: string[] = [];
  for (const sentence of description.split(/[.!?\n]\s/)) {
    const at = sentence.search(/\b(returns?|outputs?|produces?|yields?|responds? with)\b/i);
    if (at < 0) continue;
    for (const id of identifiersIn(sentence.slice(at))) out.push(normalizeField(id));
  }
  return out;
}

/** What a tool contributes to the inferred links. */
interface ToolFacts {
  outputs: Set<string>;
  inputs: Set<string>;
  /** Names (lowercase) of other tools its texts mention. */
  mentions: Set<string>;
  /** Lowercase names other tools may mention it by (full and unqualified). */
  aliases: string[];
  /** Lowercase full name: a mention of it links across servers; a bare alias only within one. */
  fullName: string;
  server: string;
}

/** The tool fields the links are inferred from. */
export interface LinkableTool {
  name: string;
  server?: string | undefined;
  description?: string | undefined;
  inputSchema?: JsonSchema | undefined;
  outputSchema?: JsonSchema | undefined;
}

/** Why an inferred edge exists: a shared field, or (without `field`) a mention by name. */
export interface InferredLink {
  /** The normalised field that links them; absent when one tool's texts name the other. */
  field?: string;
}

/** A human-readable reason for the inferred edge `from → to`. */
export function describeLink(from: string, to: string, link: InferredLink): string {
  return link.field !== undefined
    ? `${to} takes "${link.field}", an output of ${from}`
    : `${to}'s description mentions ${from}`;
}

const MENTION: InferredLink = Object.freeze({});

function add(index: Map<string, Set<string>>, key: string, name: string): void {
  let set = index.get(key);
  if (!set) {
    set = new Set();
    index.set(key, set);
  }
  set.add(name);
}

function drop(index: Map<string, Set<string>>, key: string, name: string): void {
  const set = index.get(key);
  set?.delete(name);
  if (set?.size === 0) index.delete(key);
}

/** Incremental indexes from which inferred edges are read. */
export class CatalogLinks {
  readonly #facts = new Map<string, ToolFacts>();
  /** normalised input parameter → tools taking it. */
  readonly #byInput = new Map<string, Set<string>>();
  /** normalised output field → tools returning it. */
  readonly #byOutput = new Map<string, Set<string>>();
  /** lowercase alias → tools it names. */
  readonly #byAlias = new Map<string, Set<string>>();
  /** lowercase alias → tools whose texts mention it. */
  readonly #mentionedBy = new Map<string, Set<string>>();
  readonly #maxFanout: number;

  constructor(options: { maxFanout?: number } = {}) {
    this.#maxFanout = options.maxFanout ?? DEFAULT_MAX_INFERRED_FANOUT;
  }

  /** Adds or replaces one tool. `description` should already be length-bounded. */
  add(
    tool: LinkableTool,
    inputProperties: readonly SchemaProperty[] = schemaProperties(tool.inputSchema),
  ): void {
    this.remove(tool.name);
    const inputs = new Set(inputProperties.map((p) => normalizeField(p.name)).filter(useful));
    const outputs = new Set(
      [
        ...schemaProperties(tool.outputSchema).map((p) => normalizeField(p.name)),
        ...returnedFields(tool.description ?? ''),
      ].filter(useful),
    );
    const texts = [tool.description ?? '', ...inputProperties.map((p) => p.description)].join('\n');
    const mentions = new Set(identifiersIn(texts));
    const lower = tool.name.toLowerCase();
    const aliases = new Set([lower]);
    const server = tool.server?.toLowerCase();
    if (server && lower.startsWith(server) && lower.length > server.length + 1) {
      aliases.add(lower.slice(server.length).replace(/^(?:\.|::|__|_|-|\/)/, ''));
    }
    const cut = Math.max(lower.lastIndexOf('.'), lower.lastIndexOf('::') + 1, lower.lastIndexOf('/'));
    if (cut > 0 && cut < lower.length - 1) aliases.add(lower.slice(cut + 1));
    const facts: ToolFacts = {
      outputs,
      inputs,
      mentions,
      aliases: [...aliases],
      fullName: lower,
      server: server ?? '',
    };
    this.#facts.set(tool.name, facts);
    for (const f of inputs) add(this.#byInput, f, tool.name);
    for (const f of outputs) add(this.#byOutput, f, tool.name);
    for (const a of facts.aliases) add(this.#byAlias, a, tool.name);
    for (const m of mentions) add(this.#mentionedBy, m, tool.name);
  }

  /** Removes one tool (no-op when absent). */
  remove(name: string): void {
    const facts = this.#facts.get(name);
    if (!facts) return;
    for (const f of facts.inputs) drop(this.#byInput, f, name);
    for (const f of facts.outputs) drop(this.#byOutput, f, name);
    for (const a of facts.aliases) drop(this.#byAlias, a, name);
    for (const m of facts.mentions) drop(this.#mentionedBy, m, name);
    this.#facts.delete(name);
  }

  /**
   * Whether `mentioner` naming `alias` of `mentioned` is a link: always for the full name, and
   * within one server for a bare name (`read_file` in one server's text is not another's).
   */
  #mentionLinks(alias: string, mentioned: ToolFacts, mentioner: string): boolean {
    return alias === mentioned.fullName || this.#facts.get(mentioner)?.server === mentioned.server;
  }

  /** Inferred successors of `name`: tools that take one of its outputs or mention it. */
  successors(name: string): Map<string, InferredLink> {
    const out = new Map<string, InferredLink>();
    const facts = this.#facts.get(name);
    if (!facts) return out;
    for (const field of facts.outputs) {
      const targets = this.#byInput.get(field);
      if (!targets || targets.size > this.#maxFanout) continue;
      for (const t of targets) {
        if (t !== name && !out.has(t)) out.set(t, { field });
      }
    }
    for (const alias of facts.aliases) {
      const by = this.#mentionedBy.get(alias);
      if (!by || by.size > this.#maxFanout) continue;
      for (const t of by) {
        if (t !== name && !out.has(t) && this.#mentionLinks(alias, facts, t)) out.set(t, MENTION);
      }
    }
    return out;
  }

  /** Inferred predecessors of `name`: tools that return one of its inputs or that it mentions. */
  predecessors(name: string): Map<string, InferredLink> {
    const out = new Map<string, InferredLink>();
    const facts = this.#facts.get(name);
    if (!facts) return out;
    for (const field of facts.inputs) {
      const sources = this.#byOutput.get(field);
      if (!sources || sources.size > this.#maxFanout) continue;
      for (const s of sources) if (s !== name && !out.has(s)) out.set(s, { field });
    }
    for (const m of facts.mentions) {
      const sources = this.#byAlias.get(m);
      if (!sources || sources.size > this.#maxFanout) continue;
      for (const s of sources) {
        if (s !== name && !out.has(s) && this.#mentionLinks(m, this.#facts.get(s)!, name))
          out.set(s, MENTION);
      }
    }
    return out;
  }
}

function useful(field: string): boolean {
  return field.length >= 3 && !GENERIC_FIELDS.has(field);
}
