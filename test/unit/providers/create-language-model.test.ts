/**
 * @module
 * Model specs and keys: clear errors that name the provider, the variable and the fix.
 */
import { describe, expect, it } from 'vitest';
import { isCodecallError } from '../../../src/errors.js';
import { createLanguageModel, parseModelSpec } from '../../../src/providers/create-language-model.js';

function failure(run: () => unknown): { code: string; message: string; details: Record<string, unknown> } {
  try {
    run();
  } catch (error) {
    expect(isCodecallError(error)).toBe(true);
    return error as never;
  }
  throw new Error('expected a throw');
}

describe('parseModelSpec', () => {
  it('splits at the first colon and keeps colons in the model', () => {
    expect(parseModelSpec('anthropic:claude-sonnet-4-6')).toEqual({
      provider: 'anthropic',
      modelId: 'claude-sonnet-4-6',
    });
    expect(parseModelSpec(' OpenAI:llama3.1:8b ')).toEqual({ provider: 'openai', modelId: 'llama3.1:8b' });
  });

  it('rejects unknown or missing providers with PROVIDER_UNKNOWN listing the known ones', () => {
    const unknown = failure(() => parseModelSpec('mistral:mistral-large-latest'));
    expect(unknown.code).toBe('PROVIDER_UNKNOWN');
    expect(unknown.message).toContain('"anthropic:"');
    expect(unknown.message).toContain('"openai:"');
    expect(unknown.message).toContain('"gemini:"');
    expect(unknown.message).toContain('"bedrock:"');
    expect(unknown.details['knownProviders']).toEqual(['anthropic', 'openai', 'gemini', 'bedrock']);
    expect(failure(() => parseModelSpec('claude-sonnet-4-6')).code).toBe('PROVIDER_UNKNOWN');
    expect(failure(() => parseModelSpec(':gpt-4.1')).code).toBe('PROVIDER_UNKNOWN');
  });

  it('rejects an empty model name', () => {
    expect(failure(() => parseModelSpec('openai:')).code).toBe('INVALID_ARGUMENT');
  });
});

describe('createLanguageModel: gemini and bedrock', () => {
  it('picks Gemini by name, with GEMINI_API_KEY or else GOOGLE_API_KEY, and names the variable when neither is set', () => {
    const gemini = createLanguageModel('gemini:gemini-2.5-flash', { env: { GEMINI_API_KEY: 'AIza-x' } });
    expect([gemini.provider, gemini.modelId]).toEqual(['gemini', 'gemini-2.5-flash']);
    expect(typeof gemini.stream).toBe('function');
    expect(createLanguageModel('gemini:gemini-2.5-pro', { env: { GOOGLE_API_KEY: 'AIza-y' } }).provider).toBe(
      'gemini',
    );
    const missing = failure(() => createLanguageModel('gemini:gemini-2.5-flash', { env: {} }));
    expect(missing.code).toBe('PROVIDER_MISSING_KEY');
    expect(missing.message).toContain('GEMINI_API_KEY');
  });

  it('picks Bedrock by name (model ids with colons), needs a region and no key', () => {
    const bedrock = createLanguageModel('bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0', {
      env: { AWS_REGION: 'us-west-2' },
    });
    expect([bedrock.provider, bedrock.modelId]).toEqual([
      'bedrock',
      'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
    ]);
    expect(
      createLanguageModel('bedrock:amazon.nova-pro-v1:0', { region: 'eu-central-1', env: {} }).provider,
    ).toBe('bedrock');
    const noRegion = failure(() => createLanguageModel('bedrock:amazon.nova-pro-v1:0', { env: {} }));
    expect(noRegion.code).toBe('PROVIDER_MISSING_KEY');
    expect(noRegion.message).toContain('AWS_REGION');
    const badRegion = failure(() =>
      createLanguageModel('bedrock:amazon.nova-pro-v1:0', { region: 'https://evil.example', env: {} }),
    );
    expect(badRegion.code).toBe('INVALID_ARGUMENT');
    expect(badRegion.details['field']).toBe('region');
  });
});

describe('createLanguageModel', () => {
  it('reads the key from the environment', () => {
    const model = createLanguageModel('anthropic:claude-sonnet-4-6', {
      env: { ANTHROPIC_API_KEY: 'sk-ant-x' },
    });
    expect(model.provider).toBe('anthropic');
    expect(model.modelId).toBe('claude-sonnet-4-6');
    expect(createLanguageModel('openai:gpt-4.1', { env: { OPENAI_API_KEY: 'sk-x' } }).provider).toBe(
      'openai',
    );
  });

  it('names the missing variable', () => {
    const anthropic = failure(() =>
      createLanguageModel('anthropic:claude-sonnet-4-6', { env: { ANTHROPIC_API_KEY: '  ' } }),
    );
    expect(anthropic.code).toBe('PROVIDER_MISSING_KEY');
    expect(anthropic.message).toContain('ANTHROPIC_API_KEY');
    expect(anthropic.details['variable']).toBe('ANTHROPIC_API_KEY');
    const openai = failure(() => createLanguageModel('openai:gpt-4.1', { env: {} }));
    expect(openai.code).toBe('PROVIDER_MISSING_KEY');
    expect(openai.message).toContain('OPENAI_API_KEY');
    expect(openai.message).toContain('OPENAI_BASE_URL');
  });

  it('needs no key for openai: with a base URL, but still does for anthropic:', () => {
    expect(
      createLanguageModel('openai:qwen2.5', { env: {}, baseURL: 'http://localhost:11434/v1' }).modelId,
    ).toBe('qwen2.5');
    expect(
      createLanguageModel('openai:qwen2.5', { env: { OPENAI_BASE_URL: 'http://localhost:8000/v1' } })
        .provider,
    ).toBe('openai');
    const anthropic = failure(() =>
      createLanguageModel('anthropic:claude-sonnet-4-6', {
        env: { ANTHROPIC_BASE_URL: 'http://localhost:9/' },
      }),
    );
    expect(anthropic.code).toBe('PROVIDER_MISSING_KEY');
  });

  it('rejects bad options naming the field', () => {
    const env = { OPENAI_API_KEY: 'sk-x' };
    const retries = failure(() => createLanguageModel('openai:gpt-4.1', { env, maxRetries: -1 }));
    expect(retries.code).toBe('INVALID_ARGUMENT');
    expect(retries.message).toContain('maxRetries');
    expect(
      failure(() => createLanguageModel('openai:gpt-4.1', { env, maxRetries: 1.5 })).details['field'],
    ).toBe('maxRetries');
    expect(failure(() => createLanguageModel('openai:gpt-4.1', { env, timeoutMs: 0 })).details['field']).toBe(
      'timeoutMs',
    );
    expect(
      failure(() => createLanguageModel('openai:gpt-4.1', { env, baseURL: 'localhost:11434' })).details[
        'field'
      ],
    ).toBe('baseURL');
  });
});
