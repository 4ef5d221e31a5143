/**
 * @module
 * The agent loop's conversation, hooks, stop conditions and tracing, with the offline demo model
 * over the example expense server: a run with hooks that hear every tool call, script and step;
 * the next turn continuing from `result.messages`; a run that `stopWhen` ends right after its
 * first script; `prepareStep` changing one step's system prompt; and OpenTelemetry spans (bring
 * your own SDK and exporter: here the SDK's in-memory exporter).
 *
 * Run from the repository root: `node --no-node-snapshot examples/library/conversation-and-hooks.ts`
 */
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { createOrchestrator, hasToolCall, stepCountIs } from 'codecall';

const exporter = new InMemorySpanExporter();
const tracing = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

await using agent = await createOrchestrator({
  model: 'demo',
  load: { path: new URL('../codecall.json', import.meta.url).pathname },
  runtimeOptions: { history: false },
  // Hooks are awaited: the run goes on when they return.
  onToolCall: (call) => console.log(`tool call: ${call.name} (${call.isError ? 'error' : 'ok'})`),
  onExecution: (execution) => console.log(`script: ${execution.result.toolCalls.length} MCP calls`),
  onStepFinish: (step) => console.log(`step ${step.index}: ${step.request.contextTokens} context tokens`),
  // Spans of every run: invoke_agent → chat / execute_tool → the scripts' MCP calls.
  telemetry: { tracer: tracing.getTracer('example') },
});

// Turn 1.
const first = await agent.run('Which team members exceeded their Q3 travel budget?');
console.log(first.answer.split('\n')[1]);

// Turn 2 continues the conversation: the model sees turn 1 (question, tool results, answer).
// (The demo model answers the conversation's first question again; a real model reads it all.)
const second = await agent.run([...first.messages, { role: 'user', content: 'Check it once more.' }]);
console.log(second.answer.split('\n')[1]);
console.log(`conversation: ${second.messages.length} messages`);

// Stop right after the first script ran (or after 5 steps), without asking the model again.
const stopped = await agent.run('Which team members exceeded their Q3 travel budget?', {
  stopWhen: [hasToolCall('execute_code'), stepCountIs(5)],
  // Change the model, tools, system prompt or messages of one step.
  prepareStep: ({ stepNumber }) => (stepNumber === 2 ? { system: 'Write the script now.' } : undefined),
});
console.log(`stopped after ${stopped.steps.length} steps`);

await tracing.forceFlush();
const names = new Set(exporter.getFinishedSpans().map((span) => span.name));
console.log(`spans: ${[...names].sort().join(', ')}`);
