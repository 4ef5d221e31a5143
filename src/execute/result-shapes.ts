/**
 * @module
 * Learned result types (docs/data.md): the shapes of the results a runtime sees, for tools
 * without an `outputSchema`, declared to the model as `Promise<{ … }>` with a note saying how
 * many results they were inferred from.
 *
 * Learning stays off the path of every call. During a run, a {@link ShapeSampler} keeps at most
 * `DEFAULT_RESULT_SHAPE_SAMPLES_PER_RUN` results of each tool: a parsed value is reduced to its
 * shape at once (a walk bounded by `DEFAULT_RESULT_SHAPE_MAX_NODES`, sampling arrays), a JSON
 * text (which the host passes to the sandbox unparsed) is only kept by reference. After the run,
 * the book parses the kept texts (at most `DEFAULT_RESULT_SHAPE_PARSE_MAX_BYTES` a run) on a later
 * turn of the event loop, merges the shapes, and the runtime writes them to the history store
 * without the run waiting for it. A result held as a handle is learned from the value the host
 * parsed to hold it.
 */
import {
  DEFAULT_RESULT_SHAPE_PARSE_MAX_BYTES,
  DEFAULT_RESULT_SHAPE_SAMPLES_PER_RUN,
} from '../config/defaults.js';
import type { DeclarableTool } from '../compile/index.js';
import { SHAPE_BOUNDS, type LearnedShape } from '../store/index.js';
import type { JsonSchema } from '../types.js';
import { JsonText } from '../util/json-text.js';
import { inferShape, mergeShapes, shapeToSchema, type ResultShape } from '../util/result-shape.js';

/** One kept sample: a shape already, or a JSON text to parse after the run. */
export type ShapeSample = { tool: string; shape: ResultShape } | { tool: string; text: JsonText };

/** Collects one run's samples (see the module comment); cheap on every call. */
export class ShapeSampler {
  readonly #samples: ShapeSample[] = [];
  readonly #perTool = new Map<string, number>();
  readonly #wants: (tool: string) => boolean;

  constructor(wants: (tool: string) => boolean) {
    this.#wants = wants;
  }

  #take(tool: string): boolean {
    const taken = this.#perTool.get(tool) ?? 0;
    if (taken >= DEFAULT_RESULT_SHAPE_SAMPLES_PER_RUN || !this.#wants(tool)) return false;
    this.#perTool.set(tool, taken + 1);
    return true;
  }

  /** A tool's result as the pool returned it (a value, or a JSON text passed through). */
  observe(tool: string, value: unknown): void {
    if (!this.#take(tool)) return;
    if (JsonText.isInstance(value)) {
      this.#samples.push({ tool, text: value });
      return;
    }
    const shape = inferShape(value, SHAPE_BOUNDS);
    if (shape !== undefined) this.#samples.push({ tool, shape });
  }

  /** A result the host holds as a handle, from the value it parsed to hold it (a bounded walk). */
  observeHeld(tool: string, value: unknown): void {
    if (!this.#take(tool)) return;
    const shape = inferShape(value, SHAPE_BOUNDS);
    if (shape !== undefined) this.#samples.push({ tool, shape });
  }

  /** The samples, once (the run is over). */
  drain(): ShapeSample[] {
    return this.#samples.splice(0);
  }
}

/** What the declarations show for a tool's learned shape. */
interface LearnedOutput {
  schema: JsonSchema;
  results: number;
}

/**
 * The learned shapes of one runtime, in memory: loaded from the history store when it opens,
 * widened by every run (and written back by the runtime).
 */
export class ResultShapeBook {
  readonly #shapes = new Map<string, ResultShape>();
  /** The rendered schema of a shape, kept until the shape changes (declarations cache by identity). */
  readonly #outputs = new Map<string, LearnedOutput>();

  constructor(initial: readonly LearnedShape[] = []) {
    for (const { tool, shape } of initial) this.#shapes.set(tool, shape);
  }

  /** Tools with a learned shape. */
  get size(): number {
    return this.#shapes.size;
  }

  /** Merges one tool's new shape into the book; returns it (what the store merges too). */
  learn(tool: string, shape: ResultShape): void {
    const kept = this.#shapes.get(tool);
    this.#shapes.set(tool, kept === undefined ? shape : mergeShapes(kept, shape, SHAPE_BOUNDS));
    this.#outputs.delete(tool);
  }

  /**
   * The shapes of a finished run's samples, one merged shape per tool (the texts parsed here,
   * at most {@link DEFAULT_RESULT_SHAPE_PARSE_MAX_BYTES} in all).
   */
  static shapesOf(samples: readonly ShapeSample[]): LearnedShape[] {
    const byTool = new Map<string, ResultShape>();
    let parseBudget = DEFAULT_RESULT_SHAPE_PARSE_MAX_BYTES;
    for (const sample of samples) {
      let shape: ResultShape | undefined;
      if ('shape' in sample) shape = sample.shape;
      else {
        if (sample.text.text.length > parseBudget) continue;
        parseBudget -= sample.text.text.length;
        shape = inferShape(sample.text.value(), SHAPE_BOUNDS);
      }
      if (shape === undefined) continue;
      const kept = byTool.get(sample.tool);
      byTool.set(sample.tool, kept === undefined ? shape : mergeShapes(kept, shape, SHAPE_BOUNDS));
    }
    return [...byTool].map(([tool, shape]) => ({ tool, shape }));
  }

  /** The declared output of `tool`: its learned shape as a JSON Schema and how many results it came from. */
  outputOf(tool: string): LearnedOutput | undefined {
    const cached = this.#outputs.get(tool);
    if (cached) return cached;
    const shape = this.#shapes.get(tool);
    if (shape === undefined) return undefined;
    const output = { schema: shapeToSchema(shape, SHAPE_BOUNDS) as JsonSchema, results: shape.seen };
    this.#outputs.set(tool, output);
    return output;
  }

  /**
   * `tools` for the declarations: a tool without an `outputSchema` that has a learned shape is
   * declared with it, and a note says it was inferred. A declared `outputSchema` always wins.
   */
  declarable<T extends DeclarableTool>(tools: readonly T[]): Array<T | DeclarableTool> {
    if (this.#shapes.size === 0) return [...tools];
    return tools.map((tool) => {
      if (tool.outputSchema !== undefined) return tool;
      const output = this.outputOf(tool.name);
      if (output === undefined) return tool;
      return {
        name: tool.name,
        namespace: tool.namespace,
        member: tool.member,
        ...(tool.title !== undefined ? { title: tool.title } : {}),
        ...(tool.description !== undefined ? { description: tool.description } : {}),
        ...(tool.inputSchema !== undefined ? { inputSchema: tool.inputSchema } : {}),
        ...(tool.inputExamples !== undefined ? { inputExamples: tool.inputExamples } : {}),
        outputSchema: output.schema,
        outputNote: `Result type inferred from ${output.results} result${output.results === 1 ? '' : 's'} (the server declares none): a field may be missing or wider than shown.`,
      };
    });
  }
}
