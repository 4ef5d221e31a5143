/**
 * @module
 * Trace context of the requests `codecall serve` answers. A client's `_meta` trace context
 * (`traceparent`, `tracestate`, `baggage`; MCP 2026-07-28 basic/index, and the OpenTelemetry
 * semantic conventions for MCP under every revision) parents the request's span, and the span of
 * each upstream call a run makes parents that call's request (its `_meta` carries the context on).
 *
 * Spans only when `serve.telemetry` is on: `@opentelemetry/api` is then loaded (once, lazily) and
 * spans go to the global tracer provider the user registered (an SDK started with
 * `node --import`). With it off, codecall makes no spans and hands the client's context on to the
 * upstream calls unchanged, a transparent hop as W3C Trace Context allows.
 *
 * Span names and attributes follow the semantic conventions for MCP (Development status):
 * `tools/call <tool>` (kind SERVER) for the request, `tools/call <server.tool>` (kind CLIENT) for
 * each upstream call, with `mcp.method.name`, `gen_ai.operation.name`, `gen_ai.tool.name`,
 * `mcp.session.id` and `jsonrpc.request.id`.
 */
import type * as OtelApiModule from '@opentelemetry/api';
import type { Context, Span } from '@opentelemetry/api';
import { CodecallError } from '../errors.js';
import {
  formatTraceparent,
  parseTraceparent,
  passThroughTrace,
  traceCarrierOf,
  type CallTrace,
  type TraceCarrier,
  type TracedCall,
} from '../util/trace-context.js';

type OtelApi = typeof OtelApiModule;

/** SpanKind.SERVER / CLIENT and SpanStatusCode.ERROR, as the API numbers them. */
const SPAN_KIND_SERVER = 1;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;
/** Characters of a client-given tool name kept in a span's name. */
const MAX_SPAN_TOOL_NAME = 128;

/** One request as the tracing sees it. */
export interface TracedRequest {
  /** The tool the client called (`execute_code`, `search_tools`, a direct tool's name). */
  tool: string;
  /** The request's `_meta` (untrusted). */
  meta: unknown;
  sessionId?: string | undefined;
  requestId?: string | number | undefined;
}

/** Traces the requests of one server. */
export interface RequestTracing {
  /**
   * Runs `work` as the request's span; `work` gets the trace its upstream calls go under
   * (`undefined`: nothing to carry). `failed` tells a result that is an error (`isError`).
   */
  request<T>(
    request: TracedRequest,
    work: (trace: CallTrace | undefined) => Promise<T>,
    failed?: (result: T) => boolean,
  ): Promise<T>;
}

/** No spans: the client's trace context goes on to the upstream calls unchanged. */
export const passThroughTracing: RequestTracing = {
  request(request, work) {
    const carrier = traceCarrierOf(request.meta);
    return work(carrier === undefined ? undefined : passThroughTrace(carrier));
  },
};

let loading: Promise<OtelApi> | undefined;

/**
 * Loads `@opentelemetry/api` once; rejects with an error that names `serve.telemetry` and the
 * install command when the package is missing.
 */
export function loadTracingApi(): Promise<OtelApi> {
  loading ??= import('@opentelemetry/api').catch((error: unknown) => {
    loading = undefined;
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'serve.telemetry is on but the @opentelemetry/api package is missing: npm install @opentelemetry/api ' +
        '(and start an OpenTelemetry SDK with node --import to export spans), or set serve.telemetry to false.',
      { details: { field: 'serve.telemetry' }, cause: error },
    );
  });
  return loading;
}

function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : error instanceof Error ? error.name : 'Error';
}

function failSpan(span: Span, error: unknown): void {
  span.setAttribute('error.type', errorType(error));
  span.setStatus({
    code: STATUS_ERROR,
    message: error instanceof Error ? error.message.slice(0, 500) : String(error).slice(0, 500),
  });
}

/** The `_meta` trace context that continues from `span` (the client's baggage rides along). */
function carrierOf(api: OtelApi, span: Span, inbound: TraceCarrier | undefined): TraceCarrier | undefined {
  const context = span.spanContext();
  if (!api.isSpanContextValid(context)) return inbound;
  const carrier: TraceCarrier = {
    traceparent: formatTraceparent({
      traceId: context.traceId,
      spanId: context.spanId,
      flags: context.traceFlags,
    }),
  };
  const state = context.traceState?.serialize();
  if (state !== undefined && state !== '') carrier.tracestate = state;
  if (inbound?.baggage !== undefined) carrier.baggage = inbound.baggage;
  return carrier;
}

/** The client's span as the parent context (none: the active context, a new trace). */
function parentContext(api: OtelApi, inbound: TraceCarrier | undefined): Context {
  const parent = inbound === undefined ? undefined : parseTraceparent(inbound.traceparent);
  if (parent === undefined) return api.context.active();
  return api.trace.setSpanContext(api.ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.flags,
    isRemote: true,
    ...(inbound?.tracestate !== undefined ? { traceState: api.createTraceState(inbound.tracestate) } : {}),
  });
}

/** Spans on the global tracer provider (`serve.telemetry: true`). */
export function otelTracing(): RequestTracing {
  return {
    async request(request, work, failed) {
      const api = await loadTracingApi();
      const tracer = api.trace.getTracer('codecall');
      const inbound = traceCarrierOf(request.meta);
      const parent = parentContext(api, inbound);
      // The name is the client's: bounded, so a hostile one cannot bloat every span.
      const tool = request.tool.slice(0, MAX_SPAN_TOOL_NAME);
      const span = tracer.startSpan(
        `tools/call ${tool}`,
        {
          kind: SPAN_KIND_SERVER,
          attributes: {
            'mcp.method.name': 'tools/call',
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': tool,
            ...(request.sessionId !== undefined ? { 'mcp.session.id': request.sessionId } : {}),
            ...(request.requestId !== undefined ? { 'jsonrpc.request.id': String(request.requestId) } : {}),
          },
        },
        parent,
      );
      const context = api.trace.setSpan(parent, span);
      const trace: CallTrace = {
        startCall({ tool, server }): TracedCall {
          const call = tracer.startSpan(
            `tools/call ${tool}`,
            {
              kind: SPAN_KIND_CLIENT,
              attributes: {
                'mcp.method.name': 'tools/call',
                'gen_ai.operation.name': 'execute_tool',
                'gen_ai.tool.name': tool,
                'codecall.server': server,
              },
            },
            context,
          );
          return {
            meta: carrierOf(api, call, inbound),
            end(error) {
              if (error !== undefined) failSpan(call, error);
              call.end();
            },
          };
        },
      };
      try {
        const result = await api.context.with(context, () => work(trace));
        if (failed?.(result) === true) span.setAttribute('error.type', 'tool_error');
        return result;
      } catch (error) {
        failSpan(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  };
}

/** The tracing `serve.telemetry` asks for. */
export function requestTracing(telemetry: boolean): RequestTracing {
  return telemetry ? otelTracing() : passThroughTracing;
}
