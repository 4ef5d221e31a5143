/**
 * @module
 * W3C Trace Context carried in an MCP request's `_meta` (`traceparent`, `tracestate`,
 * `baggage`: MCP 2026-07-28, basic/index "OpenTelemetry trace context"; the same keys the
 * OpenTelemetry semantic conventions for MCP propagate under every revision). A client's context
 * is read defensively (the values are untrusted: malformed or oversized ones are dropped, never
 * echoed), and the calls codecall makes upstream on its behalf carry it on.
 */

/** Trace context as it travels in `_meta`. */
export interface TraceCarrier {
  /** `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`. */
  traceparent: string;
  tracestate?: string | undefined;
  baggage?: string | undefined;
}

/**
 * W3C's limits: tracestate holds at most 32 list members (and 512 characters is the size every
 * vendor must propagate); baggage at most 8,192 bytes. Longer values are dropped, not truncated.
 */
export const MAX_TRACESTATE_LENGTH = 512;
export const MAX_BAGGAGE_LENGTH = 8192;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[\x21-\x7e]*)?$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);
// Printable ASCII, no control characters: what both headers allow, loosely.
const HEADER_VALUE = /^[\x20-\x7e]*$/;

/** A parsed `traceparent`. */
export interface TraceParent {
  traceId: string;
  spanId: string;
  /** The trace-flags byte (bit 0: sampled). */
  flags: number;
}

/**
 * Parses a `traceparent` as W3C Trace Context level 1 reads it: version `ff` and all-zero ids
 * are invalid; a future version (`01`…`fe`) is read by its first four fields.
 */
export function parseTraceparent(value: unknown): TraceParent | undefined {
  if (typeof value !== 'string' || value.length > 256) return undefined;
  const match = TRACEPARENT.exec(value);
  if (match === null) return undefined;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return undefined;
  return { traceId, spanId, flags: Number.parseInt(flags, 16) };
}

/** `00-<trace id>-<span id>-<flags>`. */
export function formatTraceparent(parent: TraceParent): string {
  return `00-${parent.traceId}-${parent.spanId}-${(parent.flags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The trace context of a request's `_meta`, or `undefined` when it has no valid `traceparent`.
 * `tracestate` and `baggage` ride along only with a valid `traceparent`, and only when they are
 * printable and within their sizes.
 */
export function traceCarrierOf(meta: unknown): TraceCarrier | undefined {
  if (meta === null || typeof meta !== 'object') return undefined;
  const record = meta as Record<string, unknown>;
  const parent = parseTraceparent(record.traceparent);
  if (parent === undefined) return undefined;
  const carrier: TraceCarrier = { traceparent: formatTraceparent(parent) };
  const state = record.tracestate;
  if (typeof state === 'string' && state.length <= MAX_TRACESTATE_LENGTH && HEADER_VALUE.test(state))
    carrier.tracestate = state;
  const baggage = record.baggage;
  if (typeof baggage === 'string' && baggage.length <= MAX_BAGGAGE_LENGTH && HEADER_VALUE.test(baggage))
    carrier.baggage = baggage;
  return carrier;
}

/** One upstream call being traced: what its request's `_meta` carries, and its end. */
export interface TracedCall {
  /** Keys for the request's `_meta` (`traceparent`…); `undefined`: none. */
  meta: TraceCarrier | undefined;
  /** Ends the call's span (with the error it failed with, if any). */
  end(error?: unknown): void;
}

/**
 * Traces the upstream calls of one request (a run, a direct call): each call may get a span of
 * its own, and its request carries the context its server should continue.
 */
export interface CallTrace {
  startCall(call: { tool: string; server: string }): TracedCall;
}

/**
 * A trace that makes no spans and hands the client's context on unchanged (OpenTelemetry not
 * configured: codecall is then a transparent hop, as W3C Trace Context allows).
 */
export function passThroughTrace(carrier: TraceCarrier): CallTrace {
  const call: TracedCall = { meta: carrier, end: () => {} };
  return { startCall: () => call };
}
