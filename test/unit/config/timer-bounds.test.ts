/**
 * Durations handed to timers codecall cannot chain (the MCP SDK's request timeout,
 * `AbortSignal.timeout`, provider SDKs, isolated-vm) are refused above Node's timer ceiling
 * (2^31 - 1 ms, about 24.8 days), which would fire them after 1 ms, with an error naming the field.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallError } from '../../../src/errors.js';
import { createLanguageModel } from '../../../src/providers/create-language-model.js';

function configError(raw: Record<string, unknown>): CodecallError<'CONFIG_INVALID'> {
  try {
    parseConfig(raw, { file: '<inline>', env: {} });
  } catch (error) {
    if (CodecallError.isInstance(error, 'CONFIG_INVALID')) return error;
    throw error;
  }
  throw new Error('expected CONFIG_INVALID');
}

describe('timer bounds', () => {
  it('refuses configuration durations past 2^31 - 1 ms, naming the key', () => {
    // Written out, not derived from the constant under test.
    const over = 2 ** 31;
    const cases: [Record<string, unknown>, string][] = [
      [
        { mcpServers: { s: { url: 'http://127.0.0.1:9/mcp', toolTimeoutMs: over } } },
        'mcpServers.s.toolTimeoutMs',
      ],
      [
        { mcpServers: { s: { url: 'http://127.0.0.1:9/mcp', connectTimeoutMs: over } } },
        'mcpServers.s.connectTimeoutMs',
      ],
      [
        { mcpServers: { s: { url: 'http://127.0.0.1:9/mcp', tools: { t: { timeoutMs: over } } } } },
        'mcpServers.s.tools.t.timeoutMs',
      ],
      [{ sandbox: { wallTimeMs: over } }, 'sandbox.wallTimeMs'],
      [{ sandbox: { cpuTimeMs: over } }, 'sandbox.cpuTimeMs'],
      [{ approvals: { timeoutMs: over } }, 'approvals.timeoutMs'],
      [
        { search: { embeddings: { baseUrl: 'http://127.0.0.1:9', model: 'm', timeoutMs: over } } },
        'search.embeddings.timeoutMs',
      ],
    ];
    for (const [raw, path] of cases) {
      const error = configError(raw);
      const issue = error.details.issues?.find((i) => i.path === path);
      expect(issue, `${path}: ${error.message}`).toBeDefined();
      expect(issue!.message).toContain('2147483647');
    }
    // The ceiling itself is accepted.
    expect(() =>
      parseConfig(
        { mcpServers: { s: { url: 'http://127.0.0.1:9/mcp', toolTimeoutMs: 2 ** 31 - 1 } } },
        { file: '<inline>', env: {} },
      ),
    ).not.toThrow();
  });

  it('refuses a provider timeout or retry delay past 2^31 - 1 ms, naming the option', () => {
    for (const field of ['timeoutMs', 'maxRetryDelayMs'] as const) {
      let caught: unknown;
      try {
        createLanguageModel('openai:local', {
          baseURL: 'http://127.0.0.1:9/v1',
          env: {},
          [field]: 2 ** 31,
        });
      } catch (error) {
        caught = error;
      }
      expect(caught).toMatchObject({ code: 'INVALID_ARGUMENT', details: { field } });
    }
  });
});
