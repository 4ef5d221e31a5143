/**
 * @module
 * What every backend shares to keep learned result shapes: the bounds, the check of a shape
 * given to `mergeShape`, the parse of a kept row, and the compare-and-set loop that merges a
 * shape atomically against other writers of the same history (a fleet): read the kept shape and
 * its version, merge, write only if the version is unchanged, else read again.
 */
import {
  DEFAULT_RESULT_SHAPE_LITERAL_MIN_COUNT,
  DEFAULT_RESULT_SHAPE_MAX_BYTES,
  DEFAULT_RESULT_SHAPE_MAX_DEPTH,
  DEFAULT_RESULT_SHAPE_MAX_KEYS,
  DEFAULT_RESULT_SHAPE_MAX_LITERAL_CHARS,
  DEFAULT_RESULT_SHAPE_MAX_LITERALS,
  DEFAULT_RESULT_SHAPE_MAX_NODES,
  DEFAULT_RESULT_SHAPE_MERGE_ATTEMPTS,
  DEFAULT_RESULT_SHAPE_SAMPLE_ITEMS,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import { mergeShapes, sanitizeShape, type ResultShape, type ShapeBounds } from '../util/result-shape.js';
import type { LearnedShape } from './types.js';

/** The bounds every store keeps shapes within (the `DEFAULT_RESULT_SHAPE_*` constants). */
export const SHAPE_BOUNDS: ShapeBounds = {
  maxDepth: DEFAULT_RESULT_SHAPE_MAX_DEPTH,
  maxKeys: DEFAULT_RESULT_SHAPE_MAX_KEYS,
  maxLiterals: DEFAULT_RESULT_SHAPE_MAX_LITERALS,
  maxLiteralChars: DEFAULT_RESULT_SHAPE_MAX_LITERAL_CHARS,
  literalMinCount: DEFAULT_RESULT_SHAPE_LITERAL_MIN_COUNT,
  maxBytes: DEFAULT_RESULT_SHAPE_MAX_BYTES,
  maxNodes: DEFAULT_RESULT_SHAPE_MAX_NODES,
  sampleItems: DEFAULT_RESULT_SHAPE_SAMPLE_ITEMS,
};

/** Characters of a tool name a store keeps a shape for. */
const MAX_TOOL_CHARS = 512;

/** Checks `mergeShape`'s arguments; returns the shape rebuilt clean and bounded. */
export function checkShapeArgs(tool: unknown, shape: unknown): ResultShape {
  if (typeof tool !== 'string' || tool === '' || tool.length > MAX_TOOL_CHARS)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      `A learned shape needs its tool's qualified name (1-${MAX_TOOL_CHARS} characters).`,
      { details: { field: 'tool' } },
    );
  const clean = sanitizeShape(shape, SHAPE_BOUNDS);
  if (clean === undefined)
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'A learned shape must be a ResultShape ({ seen, types, … }): make it with inferShape.',
      { details: { field: 'shape' } },
    );
  return clean;
}

/** A kept row as a {@link LearnedShape}, or undefined when it is damaged (it is skipped). */
export function parseShapeRow(tool: string, json: unknown): LearnedShape | undefined {
  let raw: unknown = json;
  if (typeof json === 'string') {
    try {
      raw = JSON.parse(json);
    } catch {
      return undefined;
    }
  }
  const shape = sanitizeShape(raw, SHAPE_BOUNDS);
  return shape === undefined ? undefined : { tool, shape };
}

/** One tool's kept shape and its version (`0`: none kept yet). */
export interface ShapeCell {
  json: string | undefined;
  version: number;
}

/** What a compare-and-set write answered. */
export type ShapeWrite = 'written' | 'conflict' | 'full';

/**
 * Merges `shape` into the tool's kept one with `read` and `write` (a compare-and-set on the
 * version: `write(json, version)` writes only when the kept version is still `version`, `0`
 * meaning "none kept yet"). Gives up after {@link DEFAULT_RESULT_SHAPE_MERGE_ATTEMPTS}
 * conflicts with `HISTORY_STORE_FAILED`.
 */
export async function mergeWithRetry(
  backend: 'sqlite' | 'redis' | 'postgres',
  tool: string,
  shape: ResultShape,
  read: () => Promise<ShapeCell>,
  write: (json: string, version: number) => Promise<ShapeWrite>,
): Promise<void> {
  for (let attempt = 0; attempt < DEFAULT_RESULT_SHAPE_MERGE_ATTEMPTS; attempt++) {
    const cell = await read();
    const kept = cell.json === undefined ? undefined : parseShapeRow(tool, cell.json)?.shape;
    const merged = kept === undefined ? shape : mergeShapes(kept, shape, SHAPE_BOUNDS);
    const answer = await write(JSON.stringify(merged), cell.version);
    if (answer !== 'conflict') return;
  }
  throw new CodecallError(
    'HISTORY_STORE_FAILED',
    `The learned shape of ${tool} changed under ${DEFAULT_RESULT_SHAPE_MERGE_ATTEMPTS} merges in a row (other writers of this history): it was not updated this time.`,
    { details: { backend } },
  );
}
