/**
 * @module
 * The words of a tool's example arguments, for the BM25F field `examples`: the values of its
 * `inputExamples` (codecall's `tools.<name>.inputExamples`, or any the caller passes), then the
 * JSON Schema `examples` annotations of its input schema and of each property (JSON Schema
 * 2020-12 Validation §9.5: "examples" is an array of sample values; MCP's `Tool` has no examples
 * field of its own, so an upstream server's examples travel in its `inputSchema`). Only values are
 * read (names are the `parameterNames` field already). Everything is untrusted and bounded:
 * examples per tool, nodes visited, nesting depth and characters, each a named default.
 */
import {
  DEFAULT_SEARCH_EXAMPLE_MAX_CHARS,
  DEFAULT_SEARCH_EXAMPLE_MAX_DEPTH,
  DEFAULT_SEARCH_EXAMPLE_MAX_NODES,
  DEFAULT_SEARCH_MAX_EXAMPLES_PER_TOOL,
} from '../config/defaults.js';

/** Bounds of {@link exampleText}, each defaulting to its named constant. */
export interface ExampleTextLimits {
  /** Examples read per tool (of `inputExamples`, and of each `examples` array). */
  examples: number;
  /** Values, arrays and objects visited in all. */
  nodes: number;
  /** Nesting depth below one example. */
  depth: number;
  /** Characters of the text. */
  chars: number;
}

const DEFAULT_LIMITS: ExampleTextLimits = {
  examples: DEFAULT_SEARCH_MAX_EXAMPLES_PER_TOOL,
  nodes: DEFAULT_SEARCH_EXAMPLE_MAX_NODES,
  depth: DEFAULT_SEARCH_EXAMPLE_MAX_DEPTH,
  chars: DEFAULT_SEARCH_EXAMPLE_MAX_CHARS,
};

class ExampleWalk {
  readonly parts: string[] = [];
  readonly limits: ExampleTextLimits;
  #chars = 0;
  #nodes = 0;

  constructor(limits: ExampleTextLimits) {
    this.limits = limits;
  }

  get full(): boolean {
    return this.#chars >= this.limits.chars || this.#nodes >= this.limits.nodes;
  }

  /** Adds the leaf values of `value` (strings, finite numbers, booleans), depth first. */
  visit(value: unknown, depth: number): void {
    if (this.full) return;
    this.#nodes++;
    if (typeof value === 'string') this.#add(value);
    else if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean')
      this.#add(String(value));
    else if (depth < this.limits.depth && typeof value === 'object' && value !== null) {
      // An array's first `examples` entries; an object's values until the node budget is spent.
      if (Array.isArray(value)) {
        for (const item of value.slice(0, this.limits.examples)) {
          if (this.full) return;
          this.visit(item, depth + 1);
        }
      } else {
        const record = value as Record<string, unknown>;
        for (const key in record) {
          if (this.full) return;
          if (Object.hasOwn(record, key)) this.visit(record[key], depth + 1);
        }
      }
    }
  }

  #add(text: string): void {
    const room = this.limits.chars - this.#chars;
    const part = text.slice(0, room);
    if (part === '') return;
    this.parts.push(part);
    this.#chars += part.length + 1;
  }
}

/** The `examples` array of a schema object, if it has one. */
function schemaExamples(schema: unknown): unknown[] | undefined {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) return undefined;
  const examples = (schema as { examples?: unknown }).examples;
  return Array.isArray(examples) ? examples : undefined;
}

/**
 * The text of a tool's example arguments: `inputExamples` first, then its input schema's
 * `examples` and its properties' (top level), cut at the limits. Never throws: a value that cannot
 * be read (a throwing getter, a revoked proxy) ends the walk with what was read.
 */
export function exampleText(
  inputExamples: unknown,
  inputSchema: unknown,
  limits: ExampleTextLimits = DEFAULT_LIMITS,
): string {
  const walk = new ExampleWalk(limits);
  try {
    if (Array.isArray(inputExamples)) {
      for (const example of inputExamples.slice(0, limits.examples)) walk.visit(example, 0);
    }
    const root = schemaExamples(inputSchema);
    if (root) for (const example of root.slice(0, limits.examples)) walk.visit(example, 0);
    const properties =
      typeof inputSchema === 'object' && inputSchema !== null
        ? (inputSchema as { properties?: unknown }).properties
        : undefined;
    if (typeof properties === 'object' && properties !== null && !Array.isArray(properties)) {
      const record = properties as Record<string, unknown>;
      let read = 0;
      for (const key in record) {
        if (walk.full || ++read > limits.nodes) break;
        const examples = Object.hasOwn(record, key) ? schemaExamples(record[key]) : undefined;
        if (examples) for (const example of examples.slice(0, limits.examples)) walk.visit(example, 1);
      }
    }
  } catch {
    // Hostile input (getters, proxies): keep what was read.
  }
  return walk.parts.join('\n');
}
