/**
 * Trace context through `createCodecallServer` (MCP 2026-07-28 basic/index, "OpenTelemetry trace
 * context"): a client's `_meta.traceparent` reaches the upstream calls a run or a direct call
 * makes — unchanged with `serve.telemetry` off, and with `serve.telemetry` on as the context of
 * codecall's own spans (the request's SERVER span is the client span's child, each upstream call's
 * CLIENT span the request span's child, and the upstream request carries that call span). The
 * SDK's Client over an in-memory pair, a real runtime, a real OpenTelemetry SDK (in-memory
 * exporter), and a low-level SDK server upstream that answers with the `_meta` it was sent.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { trace } from '@opentelemetry/api';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { createCodecallServer } from '../../../src/server/index.js';
import { inMemoryTransport } from '../../../src/testing/servers/index.js';

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const TRACEPARENT = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;

/** Upstream: `echo_meta` answers with the trace keys of the `_meta` its request carried. */
function metaServer(): Server {
  const server = new Server({ name: 'probe', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: [{ name: 'echo_meta', description: 'Echoes the request _meta.', inputSchema: { type: 'object' } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, (request) => {
    const meta = (request.params._meta ?? {}) as Record<string, unknown>;
    const seen = { traceparent: meta.traceparent, tracestate: meta.tracestate, baggage: meta.baggage };
    return { content: [{ type: 'text', text: JSON.stringify(seen) }], structuredContent: seen };
  });
  return server;
}

interface Seen {
  traceparent?: string;
  tracestate?: string;
  baggage?: string;
}

const dir = mkdtempSync(join(tmpdir(), 'codecall-trace-context-'));
const opened: { runtime: CodecallRuntime; client: Client }[] = [];

async function open(telemetry: boolean): Promise<Client> {
  const configPath = join(dir, `codecall-${telemetry}.json`);
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        probe: { command: 'unused', deferLoading: false, allowedCallers: ['direct', 'code_execution'] },
      },
      sandbox: { cpuTimeMs: 5_000, memoryMb: 64 },
      history: { enabled: false },
      serve: { telemetry },
    }),
  );
  const runtime = await CodecallRuntime.open({
    load: { path: configPath },
    history: false,
    tools: { transports: { probe: inMemoryTransport(metaServer) } },
  });
  const client = new Client({ name: 'trace-client', version: '1.0.0' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createCodecallServer({ runtime }).connect(serverSide);
  await client.connect(clientSide);
  opened.push({ runtime, client });
  return client;
}

/** What the upstream saw, from a script that calls it and prints its answer. */
async function seenByScript(client: Client, meta: Record<string, unknown> | undefined): Promise<Seen> {
  const result = (await client.callTool({
    name: 'execute_code',
    arguments: { code: 'console.log(JSON.stringify(await tools.probe.echo_meta({})))' },
    ...(meta !== undefined ? { _meta: meta } : {}),
  })) as CallToolResult;
  const text = (result.content[0] as { text: string }).text;
  const line = /^stdout:\n(.*)$/m.exec(text)?.[1];
  expect(line, text).toBeDefined();
  return JSON.parse(line!) as Seen;
}

/** What the upstream saw, through a direct (pass-through) call. */
async function seenDirect(client: Client, meta: Record<string, unknown>): Promise<Seen> {
  const result = (await client.callTool({
    name: 'probe__echo_meta',
    arguments: {},
    _meta: meta,
  })) as CallToolResult;
  return result.structuredContent as Seen;
}

const exporter = new InMemorySpanExporter();

beforeAll(() => {
  trace.setGlobalTracerProvider(
    new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
  );
});

afterAll(async () => {
  for (const { client, runtime } of opened) {
    await client.close();
    await runtime.close();
  }
  trace.disable();
  rmSync(dir, { recursive: true, force: true });
});

describe('serve.telemetry off: the client trace context goes on unchanged', () => {
  let client: Client;
  beforeAll(async () => {
    client = await open(false);
  });

  it('from a script and from a direct call, traceparent, tracestate and baggage as sent; no spans', async () => {
    exporter.reset();
    const meta = { traceparent: TRACEPARENT, tracestate: 'congo=t61rcWkgMzE', baggage: 'tenant=acme' };
    expect(await seenByScript(client, meta)).toEqual(meta);
    expect(await seenDirect(client, meta)).toEqual(meta);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it('a request without trace context adds none', async () => {
    expect(await seenByScript(client, undefined)).toEqual({});
  });

  it('hostile values are dropped, never echoed', async () => {
    const cases: [Record<string, unknown>, Seen][] = [
      [{ traceparent: `00-${'0'.repeat(32)}-${CLIENT_SPAN}-01` }, {}],
      [{ traceparent: `00-${TRACE_ID}-${'0'.repeat(16)}-01` }, {}],
      [{ traceparent: `ff-${TRACE_ID}-${CLIENT_SPAN}-01` }, {}],
      [{ traceparent: TRACEPARENT.toUpperCase() }, {}],
      [{ traceparent: `${TRACEPARENT}-extra` }, {}],
      [{ traceparent: 42 }, {}],
      // A state without a valid parent does not travel alone.
      [{ tracestate: 'congo=1' }, {}],
      [
        { traceparent: TRACEPARENT, tracestate: `a=${'x'.repeat(600)}`, baggage: 'k=v\n' },
        { traceparent: TRACEPARENT },
      ],
    ];
    const seen = await Promise.all(cases.map(([meta]) => seenDirect(client, meta)));
    expect(seen).toEqual(cases.map(([, expected]) => expected));
  });
});

describe('serve.telemetry on: codecall spans continue the client trace', () => {
  let client: Client;
  beforeAll(async () => {
    client = await open(true);
  });

  it("a run's span is the client span's child, each upstream call's span its child, carried upstream", async () => {
    exporter.reset();
    const seen = await seenByScript(client, { traceparent: TRACEPARENT, tracestate: 'congo=t61rcWkgMzE' });
    const spans = exporter.getFinishedSpans();
    const run = spans.find((span) => span.name === 'tools/call execute_code');
    const call = spans.find((span) => span.name === 'tools/call probe.echo_meta');
    expect(run?.spanContext().traceId).toBe(TRACE_ID);
    expect(run?.parentSpanContext?.spanId).toBe(CLIENT_SPAN);
    expect(run?.kind).toBe(1); // SERVER
    expect(run?.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'execute_code',
    });
    expect(call?.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
    expect(call?.kind).toBe(2); // CLIENT
    // The upstream request carries the call's span, in the client's trace, with its state.
    expect(seen).toEqual({
      traceparent: `00-${TRACE_ID}-${call?.spanContext().spanId}-01`,
      tracestate: 'congo=t61rcWkgMzE',
    });
  });

  it('a direct call is traced the same way; a failing upstream call marks its span', async () => {
    exporter.reset();
    const seen = await seenDirect(client, { traceparent: TRACEPARENT });
    const spans = exporter.getFinishedSpans();
    const request = spans.find((span) => span.name === 'tools/call probe__echo_meta');
    const call = spans.find((span) => span.name === 'tools/call probe.echo_meta');
    expect(request?.parentSpanContext?.spanId).toBe(CLIENT_SPAN);
    expect(call?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId);
    expect(seen.traceparent).toBe(`00-${TRACE_ID}-${call?.spanContext().spanId}-01`);

    exporter.reset();
    const failed = (await client.callTool({
      name: 'execute_code',
      arguments: { code: 'throw new Error("boom")' },
      _meta: { traceparent: TRACEPARENT },
    })) as CallToolResult;
    expect(failed.isError).toBe(true);
    const run = exporter.getFinishedSpans().find((span) => span.name === 'tools/call execute_code');
    expect(run?.attributes['error.type']).toBe('tool_error');
  });

  it('without a client context a run starts a trace of its own and carries it upstream', async () => {
    exporter.reset();
    const seen = await seenByScript(client, undefined);
    const spans = exporter.getFinishedSpans();
    const run = spans.find((span) => span.name === 'tools/call execute_code');
    const call = spans.find((span) => span.name === 'tools/call probe.echo_meta');
    expect(run?.parentSpanContext).toBeUndefined();
    expect(seen.traceparent).toBe(`00-${run?.spanContext().traceId}-${call?.spanContext().spanId}-01`);
  });
});
