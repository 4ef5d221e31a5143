/**
 * @module
 * The tools a search index holds: one entry per tool with its bounded texts and BM25F fields,
 * lookups by name, by id and by exact name (full, unqualified, or split into words), and the
 * regex mode that scans the entries' texts.
 */
import type { SearchableTool, ToolSearchResult } from './tool-search-types.js';
import { schemaProperties, type SchemaProperty } from './catalog-links.js';
import { exampleText } from './example-text.js';
import { exactKeys, ExactNameTable, hashKey } from './exact-name-table.js';
import { compileRegexQuery, DEFAULT_MAX_REGEX_FIELD_CHARS } from './regex-query.js';
import { round } from './search-reasons.js';
import { splitName, tokenize, type TokenizeOptions } from './tokenize.js';
import { DEFAULT_BUILD_MEMO_TEXTS } from '../config/defaults.js';
import { DEFAULT_MAX_TOOL_NAME_CHARS } from './tool-graph.js';

/** Characters of one tool text (description, parameter descriptions) that are indexed. */
export const DEFAULT_MAX_INDEXED_TEXT_CHARS = 8_000;
/** Milliseconds a regex search may scan before it returns what it found (`truncated`). */
export const DEFAULT_REGEX_SEARCH_BUDGET_MS = 250;
/** Entries tested between two reads of the clock in a regex search. */
const REGEX_CLOCK_EVERY = 64;

/** One indexed tool. */
export interface Entry {
  id: number;
  name: string;
  /** The tool as given (its schemas feed the inferred links, built only when asked for). */
  tool: SearchableTool;
  server: string;
  /** For regex mode: bounded texts. */
  description: string;
  parameterNames: string;
  parameterDescriptions: string;
  /** The values of its example arguments, bounded ({@link exampleText}). */
  examples: string;
}

/** The BM25F field weights, by field. */
export interface FieldWeights {
  name: number;
  server: number;
  description: number;
  parameterNames: number;
  parameterDescriptions: number;
  examples: number;
}

function cut(text: unknown, max: number): string {
  return typeof text === 'string' ? text.slice(0, max) : '';
}

/**
 * The tool's own name without its server prefix (`github.create_issue` → `create_issue`), so
 * the server's words count once, in the server field, instead of in every tool name.
 */
function bareName(name: string, server: string): string {
  if (server === '' || !name.toLowerCase().startsWith(server.toLowerCase())) return name;
  const rest = name.slice(server.length).replace(/^(?:\.|::|__|_|-|\/)/, '');
  return rest === '' ? name : rest;
}

/**
 * Texts tokenised during one catalog build, by text: tools that share a server, a parameter list
 * or a description (the same server under several names, a fleet's copies of one catalog) are
 * tokenised once. Dropped with the build; cleared when it holds
 * {@link DEFAULT_BUILD_MEMO_TEXTS} texts.
 */
export class BuildMemo {
  readonly #plain = new Map<string, readonly string[]>();
  readonly #kept = new Map<string, readonly string[]>();

  /** The terms of `text` as {@link tokenize} gives them with `options` (whose stop-word choice is `keep`). */
  terms(text: string, options: TokenizeOptions, keep: boolean): readonly string[] {
    const memo = keep ? this.#kept : this.#plain;
    let terms = memo.get(text);
    if (terms === undefined) {
      terms = tokenize(text, options);
      if (memo.size >= DEFAULT_BUILD_MEMO_TEXTS) memo.clear();
      memo.set(text, terms);
    }
    return terms;
  }
}

/**
 * The BM25F fields of a tool: its own name, server, description, parameter names and
 * descriptions, and the values of its example arguments.
 * With a `memo` (a catalog build), texts seen before in the build are not tokenised again; the
 * tool's own name, nearly always new, is tokenised apart.
 */
export function indexedFields(
  entry: Entry,
  lexical: TokenizeOptions,
  memo?: BuildMemo,
): Array<readonly string[]> {
  const keep = { ...lexical, keepStopWords: true };
  const terms = (text: string, options: TokenizeOptions, kept: boolean): readonly string[] =>
    memo === undefined ? tokenize(text, options) : memo.terms(text, options, kept);
  return [
    tokenize(bareName(entry.name, entry.server), keep),
    terms(entry.server, keep, true),
    terms(entry.description, lexical, false),
    terms(entry.parameterNames, keep, true),
    terms(entry.parameterDescriptions, lexical, false),
    terms(entry.examples, lexical, false),
  ];
}

/** The entries of one index, by name, by id and by exact name. */
export class SearchEntries {
  readonly #entries = new Map<string, Entry>();
  readonly #byId: Array<Entry | undefined> = [];
  /** Entry ids by their lowercase full and unqualified names (and their words), for exact-name queries. */
  readonly #exact = new ExactNameTable();
  #nextId = 0;

  get size(): number {
    return this.#entries.size;
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  get(name: string): Entry | undefined {
    return this.#entries.get(name);
  }

  /** One more than the largest id ever given: arrays indexed by entry id need this length. */
  get capacity(): number {
    return this.#byId.length;
  }

  byId(id: number): Entry | undefined {
    return this.#byId[id];
  }

  names(): IterableIterator<string> {
    return this.#entries.keys();
  }

  values(): IterableIterator<Entry> {
    return this.#entries.values();
  }

  /** Makes the entry of `tool` (the caller removed any earlier one); returns it with its schema's properties. */
  add(tool: SearchableTool): { entry: Entry; properties: SchemaProperty[] } {
    const description = cut(tool.description, DEFAULT_MAX_INDEXED_TEXT_CHARS);
    const server = cut(tool.server, DEFAULT_MAX_TOOL_NAME_CHARS);
    const properties = schemaProperties(tool.inputSchema);
    const parameterNames = properties.map((p) => p.name).join(' ');
    const parameterDescriptions = cut(
      properties.map((p) => p.description).join('\n'),
      DEFAULT_MAX_INDEXED_TEXT_CHARS,
    );
    const id = this.#nextId++;
    const entry: Entry = {
      id,
      name: tool.name,
      tool,
      server,
      description,
      parameterNames,
      parameterDescriptions,
      examples: exampleText(tool.inputExamples, tool.inputSchema),
    };
    this.#entries.set(tool.name, entry);
    this.#byId[id] = entry;
    this.#exact.add(id, tool.name, server);
    return { entry, properties };
  }

  /** Forgets the entry of `name`; returns it, or undefined when there was none. */
  remove(name: string): Entry | undefined {
    const entry = this.#entries.get(name);
    if (!entry) return undefined;
    this.#entries.delete(name);
    this.#byId[entry.id] = undefined;
    this.#exact.remove(entry.id, entry.name, entry.server);
    return entry;
  }

  /** The tools `text` names exactly (full or unqualified name, or its words), if any. */
  exactNames(text: string): Set<string> | undefined {
    const names = this.#named(text.trim().toLowerCase()) ?? this.#named(splitName(text).join(' '));
    return names === undefined ? undefined : new Set(names);
  }

  /** The tools with `key` among their exact-name keys, in the order they were added, or undefined. */
  #named(key: string): string[] | undefined {
    const names: string[] = [];
    for (const id of this.#exact.candidates(hashKey(key))) {
      const entry = this.#byId[id];
      if (entry !== undefined && exactKeys(entry.name, entry.server).includes(key)) names.push(entry.name);
    }
    return names.length > 0 ? names : undefined;
  }

  /** Regex mode: tools whose name, description or parameters match `pattern`, within a time budget. */
  searchRegex(pattern: string, limit: number, weights: FieldWeights): ToolSearchResult {
    const { regex } = compileRegexQuery(pattern);
    const started = Date.now();
    const scored: Array<[Entry, number, string[]]> = [];
    let truncated = false;
    let tested = 0;
    for (const entry of this.#entries.values()) {
      if (++tested % REGEX_CLOCK_EVERY === 0 && Date.now() - started > DEFAULT_REGEX_SEARCH_BUDGET_MS) {
        truncated = true;
        break;
      }
      const fields: Array<[string, string, number]> = [
        ['name', entry.name, weights.name],
        ['description', entry.description, weights.description],
        ['argument names', entry.parameterNames, weights.parameterNames],
        ['argument descriptions', entry.parameterDescriptions, weights.parameterDescriptions],
      ];
      let score = 0;
      const matched: string[] = [];
      for (const [label, text, weight] of fields) {
        if (text === '') continue;
        if (regex.test(text.slice(0, DEFAULT_MAX_REGEX_FIELD_CHARS))) {
          score += Math.max(weight, 0.01);
          matched.push(label);
        }
      }
      if (matched.length > 0) scored.push([entry, score, [`pattern matches ${matched.join(', ')}`]]);
    }
    scored.sort(
      (a, b) => b[1] - a[1] || a[0].name.length - b[0].name.length || (a[0].name < b[0].name ? -1 : 1),
    );
    return {
      hits: scored
        .slice(0, limit)
        .map(([entry, score, reasons]) => ({ name: entry.name, score: round(score), reasons })),
      chains: [],
      truncated,
    };
  }
}
