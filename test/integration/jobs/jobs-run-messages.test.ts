/**
 * A `run` job that continues a conversation (`messages`) instead of starting from a `prompt`:
 * the embedded backend runs it with a real OpenAI SDK client pointed at a loopback server that
 * plays a scripted model, and the conversation must reach the model as given.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalJobBackend, type JobBackend, type JobSpecInput } from '../../../src/jobs/index.js';
import { openaiCompletion, WireServer } from '../providers/wire-server.js';
import { probeConfig, startProbeServer, type ProbeServer } from './jobs-helpers.js';

const COMPLETIONS = '/v1/chat/completions';

describe('run jobs with messages', () => {
  let probe: ProbeServer;
  let wire: WireServer;
  let jobs: JobBackend;

  beforeAll(async () => {
    probe = await startProbeServer();
    wire = await WireServer.open();
    jobs = createLocalJobBackend({
      runtimes: { configs: { default: probeConfig(probe.url).path } },
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${wire.origin}/v1` },
    });
  });

  afterAll(async () => {
    await jobs?.close();
    await wire?.close();
    await probe?.close();
  });

  it('sends the conversation to the model and answers its last question', async () => {
    wire.enqueue(COMPLETIONS, {
      body: openaiCompletion({ content: 'In Q2 travel spend was 3,400.', finishReason: 'stop' }),
    });
    const { id } = await jobs.submit({
      kind: 'run',
      model: 'openai:gpt-test',
      messages: [
        { role: 'user', content: 'What was Q3 travel spend?' },
        { role: 'assistant', content: [{ type: 'text', text: 'Q3 travel spend was 5,100.' }] },
        { role: 'user', content: 'And in Q2?' },
      ],
    });
    const record = await jobs.wait(id, { timeoutMs: 60_000 });
    expect(record.result?.status).toBe('ok');
    expect(record.result?.run?.answer).toBe('In Q2 travel spend was 3,400.');
    const sent = wire.requestsTo(COMPLETIONS);
    expect(sent).toHaveLength(1);
    const conversation = (sent[0]!.body.messages as { role: string; content: unknown }[]).filter(
      (m) => m.role !== 'system',
    );
    expect(conversation.map((m) => [m.role, m.content])).toEqual([
      ['user', 'What was Q3 travel spend?'],
      ['assistant', 'Q3 travel spend was 5,100.'],
      ['user', 'And in Q2?'],
    ]);
  });

  it('refuses a run job with both prompt and messages, or none, or a conversation not ending with the user', async () => {
    const user = { role: 'user' as const, content: 'hi' };
    // The local backend validates before it returns its promise.
    const submitting = (spec: JobSpecInput): Promise<unknown> =>
      Promise.resolve().then(() => jobs.submit(spec));
    await expect(submitting({ kind: 'run', prompt: 'x', messages: [user] })).rejects.toThrow(
      /prompt: a run job has either "prompt" .* or "messages"/,
    );
    await expect(submitting({ kind: 'run' } as JobSpecInput)).rejects.toThrow(/either "prompt"/);
    await expect(
      submitting({
        kind: 'run',
        messages: [user, { role: 'assistant', content: [{ type: 'text', text: 'y' }] }],
      }),
    ).rejects.toThrow(/messages: must end with the user's message/);
    await expect(
      submitting({ kind: 'run', messages: [{ role: 'system', content: 'x' } as never] }),
    ).rejects.toThrow(/messages\.0\.role/);
    expect(wire.requestsTo(COMPLETIONS)).toHaveLength(1);
  });

  it('denies a call that needs approval (nobody can answer while a run job runs), and the tool never runs', async () => {
    const approvalConfig = probeConfig(probe.url, {
      mcpServers: {
        probe: { type: 'http', url: probe.url, tools: { record: { requireApproval: true } } },
      },
    });
    const approvalJobs = createLocalJobBackend({
      runtimes: { configs: { default: approvalConfig.path } },
      env: { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: `${wire.origin}/v1` },
    });
    try {
      const before = wire.requestsTo(COMPLETIONS).length;
      wire.enqueue(COMPLETIONS, {
        body: openaiCompletion({
          content: null,
          toolCalls: [
            {
              id: 'call_1',
              name: 'execute_code',
              arguments: JSON.stringify({
                code: 'try { await tools.probe.record({ key: "run-job-deny" }); console.log("recorded"); } catch (error) { console.log(error.code, error.message); }',
              }),
            },
          ],
          finishReason: 'tool_calls',
        }),
      });
      wire.enqueue(COMPLETIONS, {
        body: openaiCompletion({ content: 'Not recorded.', finishReason: 'stop' }),
      });
      const { id } = await approvalJobs.submit({
        kind: 'run',
        model: 'openai:gpt-test',
        prompt: 'Record it.',
      });
      const record = await approvalJobs.wait(id, { timeoutMs: 60_000 });
      expect(record.result?.status).toBe('ok');
      expect(record.result?.run?.answer).toBe('Not recorded.');
      expect(probe.counts.records.get('run-job-deny')).toBeUndefined();
      const sent = wire.requestsTo(COMPLETIONS).slice(before);
      expect(sent).toHaveLength(2);
      const toolMessage = (sent[1]!.body.messages as { role: string; content: unknown }[]).find(
        (m) => m.role === 'tool',
      );
      expect(String(toolMessage?.content)).toMatch(
        /APPROVAL_DENIED .*a run job cannot ask for approval: set requireApproval: false/,
      );
    } finally {
      await approvalJobs.close();
    }
  });
});
