/**
 * createOrchestrator fails fast, before any server starts, on developer faults: no model, bad
 * options; and picks the model from the option, the configuration or CODECALL_MODEL.
 */
import { describe, expect, it } from 'vitest';
import { createOrchestrator, resolveLanguageModel } from '../../../src/agent/index.js';
import { parseConfig } from '../../../src/config/index.js';

const config = (agent: Record<string, unknown> = {}) =>
  parseConfig({ agent, sandbox: { mode: 'in-process' } }, { file: '<inline>', env: {} });

describe('createOrchestrator', () => {
  it('without a model, says how to choose one (and mentions the offline demo)', async () => {
    const error = await createOrchestrator({ config: config(), modelOptions: { env: {} } }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'INVALID_ARGUMENT' });
    const message = (error as Error).message;
    expect(message).toMatch(/--model demo/);
    expect(message).toMatch(/anthropic:/);
    expect(message).toMatch(/CODECALL_MODEL/);
  });

  it('rejects bad bounds with the field named', async () => {
    for (const [field, value] of [
      ['maxSteps', 0],
      ['maxRunTimeMs', -1],
      ['maxConcurrentToolCalls', 1.5],
      ['maxToolResultBytes', Number.NaN],
    ] as const) {
      const error = await createOrchestrator({ model: 'demo', config: config(), [field]: value }).catch(
        (e: unknown) => e,
      );
      expect(error).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    }
    const mode = await createOrchestrator({ model: 'demo', config: config(), mode: 'chat' as never }).catch(
      (e: unknown) => e,
    );
    expect(mode).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field: 'mode' } });
  });

  it('takes the model from the configuration, then CODECALL_MODEL', async () => {
    const fromConfig = await createOrchestrator({
      config: config({ model: 'demo' }),
      runtimeOptions: { history: false },
    });
    expect(fromConfig.model.provider).toBe('demo');
    await fromConfig.close();
    const fromEnv = await createOrchestrator({
      config: config(),
      modelOptions: { env: { CODECALL_MODEL: 'demo' } },
      runtimeOptions: { history: false },
    });
    expect(fromEnv.model.provider).toBe('demo');
    await fromEnv.close();
    await fromEnv.close(); // idempotent
  });

  it('resolves provider specs through createLanguageModel', () => {
    expect(() => resolveLanguageModel('nope:model')).toThrow(/Unknown provider/);
    const model = resolveLanguageModel('openai:local', { baseURL: 'http://127.0.0.1:9/v1', env: {} });
    expect(model.provider).toBe('openai');
  });
});
