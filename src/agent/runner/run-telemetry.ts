/**
 * @module
 * OpenTelemetry spans of a run, after the GenAI semantic conventions: `invoke_agent codecall`
 * (the run) → `chat <model>` (each model request) and `execute_tool <name>` (each tool call the
 * model made, `execute_code` included) → `execute_tool <server.tool>` (each MCP call a script
 * made). Token usage and the savings meter are attributes. Only `@opentelemetry/api` is used,
 * loaded lazily when telemetry is on; users bring the SDK and exporter.
 */
import type { Context, ContextAPI, Span, TraceAPI, Tracer } from '@opentelemetry/api';
import type { TokenUsage } from '../../providers/language-model.js';
import type { ToolCallRecord } from '../../types.js';
import type { AgentToolCall, RunResult } from '../types.js';

/** Tracing options of an orchestrator. */
export interface TelemetryOptions {
  /**
   * The tracer spans go to.
   * @defaultValue `trace.getTracer('codecall')` of the global tracer provider
   */
  tracer?: Tracer;
  /**
   * Put tool-call arguments and results (`gen_ai.tool.call.arguments`, `.result`) on spans. They
   * may hold private data. @defaultValue false
   */
  recordContent?: boolean;
}

/** The OTel API pieces a run needs (the module, loaded once). */
export interface OtelApi {
  trace: TraceAPI;
  context: ContextAPI;
}

/** SpanKind.INTERNAL / CLIENT and SpanStatusCode.ERROR, as the API numbers them. */
const SPAN_KIND_INTERNAL = 0;
const SPAN_KIND_CLIENT = 2;
const STATUS_ERROR = 2;

/** A started span and the context its children start in. */
export interface TraceScope {
  span: Span;
  context: Context;
}

function usageAttributes(usage: TokenUsage): Record<string, number> {
  return {
    'gen_ai.usage.input_tokens': usage.inputTokens,
    'gen_ai.usage.output_tokens': usage.outputTokens,
    'gen_ai.usage.cache_read.input_tokens': usage.cacheReadTokens,
    'gen_ai.usage.cache_creation.input_tokens': usage.cacheWriteTokens,
  };
}

function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** The spans of one run; every method is a no-op when telemetry is off. */
export class RunTelemetry {
  readonly #api: OtelApi | undefined;
  readonly #tracer: Tracer | undefined;
  readonly #recordContent: boolean;
  readonly #provider: string;
  readonly #model: string;

  constructor(
    api: OtelApi | undefined,
    options: TelemetryOptions | undefined,
    model: { provider: string; modelId: string },
  ) {
    this.#api = api;
    this.#tracer = api === undefined ? undefined : (options?.tracer ?? api.trace.getTracer('codecall'));
    this.#recordContent = options?.recordContent ?? false;
    this.#provider = model.provider;
    this.#model = model.modelId;
  }

  #start(
    name: string,
    kind: number,
    attributes: Record<string, string | number | boolean | string[]>,
    parent: TraceScope | undefined,
    startTime?: number,
  ): TraceScope | undefined {
    if (this.#api === undefined || this.#tracer === undefined) return undefined;
    const parentContext = parent?.context ?? this.#api.context.active();
    const span = this.#tracer.startSpan(
      name,
      { kind, attributes, ...(startTime !== undefined ? { startTime } : {}) },
      parentContext,
    );
    return { span, context: this.#api.trace.setSpan(parentContext, span) };
  }

  /** The run's span. */
  startRun(mode: string): TraceScope | undefined {
    return this.#start(
      'invoke_agent codecall',
      SPAN_KIND_INTERNAL,
      {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'codecall',
        'gen_ai.provider.name': this.#provider,
        'gen_ai.request.model': this.#model,
        'codecall.mode': mode,
      },
      undefined,
    );
  }

  /** Ends the run's span with usage and savings (and the error, if it failed). */
  endRun(scope: TraceScope | undefined, result: RunResult, error?: { code: string; message: string }): void {
    if (scope === undefined) return;
    scope.span.setAttributes({
      ...usageAttributes(result.usage),
      'codecall.steps': result.steps.length,
      'codecall.savings.context_tokens': result.savings.contextTokens,
      'codecall.savings.tool_result_tokens_kept_out': result.savings.toolResultTokensKeptOut,
      'codecall.savings.tool_result_bytes_kept_out': result.savings.toolResultBytesKeptOut,
      'codecall.savings.tool_definition_tokens_deferred': result.savings.toolDefinitionTokensDeferred,
    });
    if (error !== undefined) {
      scope.span.setAttribute('error.type', error.code);
      scope.span.setStatus({ code: STATUS_ERROR, message: error.message });
    }
    scope.span.end();
  }

  /** A model request's span. */
  startChat(
    run: TraceScope | undefined,
    step: number,
    request: { maxOutputTokens?: number; temperature?: number },
    model: { provider: string; modelId: string },
  ): TraceScope | undefined {
    return this.#start(
      `chat ${model.modelId}`,
      SPAN_KIND_CLIENT,
      {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': model.provider,
        'gen_ai.request.model': model.modelId,
        'codecall.step': step,
        ...(request.maxOutputTokens !== undefined
          ? { 'gen_ai.request.max_tokens': request.maxOutputTokens }
          : {}),
        ...(request.temperature !== undefined ? { 'gen_ai.request.temperature': request.temperature } : {}),
      },
      run,
    );
  }

  /** Ends a model request's span with its usage and finish reason, or its error. */
  endChat(
    scope: TraceScope | undefined,
    outcome: { usage: TokenUsage; stopReason: string } | { error: unknown },
  ): void {
    if (scope === undefined) return;
    if ('error' in outcome) {
      const error = outcome.error as { code?: unknown; message?: unknown } | undefined;
      scope.span.setAttribute('error.type', typeof error?.code === 'string' ? error.code : 'Error');
      scope.span.setStatus({ code: STATUS_ERROR, message: String(error?.message ?? error) });
    } else {
      scope.span.setAttributes({
        ...usageAttributes(outcome.usage),
        'gen_ai.response.finish_reasons': [outcome.stopReason],
      });
    }
    scope.span.end();
  }

  /** A tool call's span (`search_tools`, `execute_code` or a direct MCP tool). */
  startToolCall(
    run: TraceScope | undefined,
    id: string,
    name: string,
    input: unknown,
  ): TraceScope | undefined {
    return this.#start(
      `execute_tool ${name}`,
      SPAN_KIND_INTERNAL,
      {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': name,
        'gen_ai.tool.call.id': id,
        'gen_ai.tool.type': 'function',
        ...(this.#recordContent ? { 'gen_ai.tool.call.arguments': JSON.stringify(input) ?? '' } : {}),
      },
      run,
    );
  }

  /** Ends a tool call's span. */
  endToolCall(scope: TraceScope | undefined, call: AgentToolCall): void {
    if (scope === undefined) return;
    scope.span.setAttribute('codecall.tool_call.kind', call.kind);
    if (call.tool !== undefined) scope.span.setAttribute('codecall.tool', call.tool);
    if (this.#recordContent) scope.span.setAttribute('gen_ai.tool.call.result', call.content);
    if (call.isError) {
      scope.span.setAttribute('error.type', 'tool_error');
      scope.span.setStatus({ code: STATUS_ERROR, message: call.content.slice(0, 200) });
    }
    scope.span.end();
  }

  /**
   * A listener for the script's MCP calls and, once the script ends, the spans of those calls
   * under `parent` (each from its end time and duration).
   */
  scriptCalls(parent: TraceScope | undefined): {
    onToolResult: () => void;
    finish: (records: readonly ToolCallRecord[]) => void;
  } {
    const ends: number[] = [];
    return {
      onToolResult: () => {
        if (parent !== undefined) ends.push(epochMs());
      },
      finish: (records) => {
        if (parent === undefined) return;
        const now = epochMs();
        records.forEach((record, index) => {
          const end = ends[index] ?? now;
          const scope = this.#start(
            `execute_tool ${record.tool}`,
            SPAN_KIND_CLIENT,
            {
              'gen_ai.operation.name': 'execute_tool',
              'gen_ai.tool.name': record.tool,
              'gen_ai.tool.type': 'extension',
              'mcp.method.name': 'tools/call',
              'codecall.tool.caller': 'code_execution',
              'codecall.tool.args_bytes': record.argsBytes,
              'codecall.tool.result_bytes': record.resultBytes,
            },
            parent,
            end - record.durationMs,
          );
          if (scope === undefined) return;
          if (!record.ok) {
            scope.span.setAttribute('error.type', 'tool_error');
            scope.span.setStatus({ code: STATUS_ERROR, message: record.error ?? 'failed' });
          }
          scope.span.end(end);
        });
      },
    };
  }
}

/** Loads `@opentelemetry/api` (an optional peer dependency) with a clear error when it is missing. */
export async function loadOtelApi(): Promise<OtelApi> {
  try {
    const api = await import('@opentelemetry/api');
    return { trace: api.trace, context: api.context };
  } catch (error) {
    const { CodecallError } = await import('../../errors.js');
    throw new CodecallError(
      'INVALID_ARGUMENT',
      'telemetry needs the @opentelemetry/api package: npm install @opentelemetry/api (and an OpenTelemetry SDK to export spans).',
      { details: { field: 'telemetry' }, cause: error },
    );
  }
}
