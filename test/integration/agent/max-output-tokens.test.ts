/**
 * `agent.maxOutputTokens` and the `maxOutputTokens` option reach the provider's wire: the real
 * Anthropic and OpenAI-compatible models against a loopback server record the `max_tokens` they
 * were sent (8,192 when neither is set; the option wins over the configuration).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createOrchestrator } from '../../../src/agent/index.js';
import { DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS } from '../../../src/config/defaults.js';
import { parseConfig } from '../../../src/config/index.js';
import { createLanguageModel } from '../../../src/providers/create-language-model.js';
import { anthropicMessage, openaiCompletion, WireServer } from '../providers/wire-server.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-max-output-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let wire: WireServer;
beforeEach(async () => {
  wire = await WireServer.open();
});
afterEach(async () => {
  await wire.close();
});

const PROVIDERS = {
  anthropic: {
    path: '/v1/messages',
    field: 'max_tokens',
    reply: () => ({
      body: anthropicMessage({ content: [{ type: 'text', text: 'Done.' }], stopReason: 'end_turn' }),
    }),
    model: () =>
      createLanguageModel('anthropic:claude-sonnet-4-6', {
        apiKey: 'sk-ant-test',
        baseURL: wire.origin,
        env: {},
      }),
  },
  openai: {
    path: '/chat/completions',
    field: 'max_tokens',
    reply: () => ({ body: openaiCompletion({ content: 'Done.', finishReason: 'stop' }) }),
    // Another base URL than api.openai.com: the compatible-server field, `max_tokens`.
    model: () => createLanguageModel('openai:qwen3', { apiKey: 'sk-test', baseURL: wire.origin, env: {} }),
  },
} as const;

async function sentMaxTokens(
  provider: keyof typeof PROVIDERS,
  config: Record<string, unknown>,
  option?: number,
): Promise<unknown> {
  const spec = PROVIDERS[provider];
  wire.enqueue(spec.path, spec.reply());
  const agent = await createOrchestrator({
    model: spec.model(),
    config: parseConfig(config, { file: join(dir, 'codecall.json'), env: {} }),
    runtimeOptions: { history: false, sandbox: { workers: 1 } },
    ...(option === undefined ? {} : { maxOutputTokens: option }),
  });
  try {
    expect((await agent.run('Say done.')).answer).toBe('Done.');
  } finally {
    await agent.close();
  }
  const requests = wire.requestsTo(spec.path);
  expect(requests).toHaveLength(1);
  return requests[0]!.body[spec.field];
}

describe.each(['anthropic', 'openai'] as const)('max output tokens over the %s wire', (provider) => {
  it('sends the default when nothing is set', async () => {
    expect(await sentMaxTokens(provider, {})).toBe(DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS);
  });

  it('sends agent.maxOutputTokens from the configuration', async () => {
    expect(await sentMaxTokens(provider, { agent: { maxOutputTokens: 777 } })).toBe(777);
  });

  it('lets the maxOutputTokens option win over the configuration', async () => {
    expect(await sentMaxTokens(provider, { agent: { maxOutputTokens: 777 } }, 321)).toBe(321);
  });
});

describe('agent.maxOutputTokens in the configuration', () => {
  it('is refused when it is not a positive integer, naming the field', () => {
    expect(() =>
      parseConfig({ agent: { maxOutputTokens: 0 } }, { file: join(dir, 'codecall.json'), env: {} }),
    ).toThrow(/agent\.maxOutputTokens/);
  });
});
