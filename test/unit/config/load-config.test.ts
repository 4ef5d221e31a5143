import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../../src/config/index.js';
import {
  DEFAULT_BEAM_WIDTH,
  DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS,
  DEFAULT_CONFIG_MAX_BYTES,
  DEFAULT_HISTORY_MAX_RUNS,
  DEFAULT_MAX_TOOL_RESULT_BYTES,
  DEFAULT_SANDBOX_MAX_WORKERS,
  DEFAULT_SANDBOX_MIN_WORKERS,
  DEFAULT_SANDBOX_WORKER_IDLE_MS,
  DEFAULT_SANDBOX_WORKER_SPIN_US,
  DEFAULT_SERVER_MAX_MESSAGE_BYTES,
  DEFAULT_TOOL_CALL_TIMEOUT_MS,
  DEFAULT_WALL_TIME_MS,
} from '../../../src/config/defaults.js';
import { isCodecallError, type CodecallError } from '../../../src/errors.js';
import { tempDir } from '../../fixtures/temp-dir.js';

function dir(files: Record<string, unknown>): string {
  const root = tempDir('codecall-config-');
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(root, name), typeof content === 'string' ? content : JSON.stringify(content, null, 2));
  }
  return root;
}

function thrown(fn: () => unknown): CodecallError {
  try {
    fn();
  } catch (error) {
    if (isCodecallError(error)) return error;
    throw error;
  }
  throw new Error('expected a CodecallError');
}

async function rejected(promise: Promise<unknown>): Promise<CodecallError> {
  try {
    await promise;
  } catch (error) {
    if (isCodecallError(error)) return error;
    throw error;
  }
  throw new Error('expected a CodecallError');
}

describe('loadConfig', () => {
  it('reads a Claude Code .mcp.json unchanged, with stdio and remote servers', async () => {
    const cwd = dir({
      '.mcp.json': {
        mcpServers: {
          fs: {
            command: 'npx',
            args: ['-y', '@modelcontextprotocol/server-filesystem', '.'],
            env: { A: 'b' },
          },
          remote: {
            type: 'http',
            url: 'https://example.com/mcp',
            headers: { Authorization: 'Bearer ${TOKEN}' },
          },
          legacy: { type: 'sse', url: 'http://127.0.0.1:9/sse' },
          typed: { type: 'stdio', command: 'node', args: ['server.js'] },
        },
      },
    });
    const config = await loadConfig({ cwd, env: { TOKEN: 'secret' } });
    expect(config.configPath).toBe(join(cwd, '.mcp.json'));
    expect(config.mcpServers.fs).toMatchObject({
      transport: 'stdio',
      command: 'npx',
      env: { A: 'b' },
      cwd,
      toolTimeoutMs: DEFAULT_TOOL_CALL_TIMEOUT_MS,
      deferLoading: true,
    });
    expect(config.mcpServers.fs!.allowedCallers).toBeUndefined();
    expect(config.mcpServers.remote).toMatchObject({
      transport: 'http',
      headers: { Authorization: 'Bearer secret' },
    });
    expect(config.mcpServers.legacy).toMatchObject({ transport: 'sse' });
    expect(config.mcpServers.typed).toMatchObject({ transport: 'stdio', command: 'node' });
    expect(config.sandbox.limits.wallTimeMs).toBe(DEFAULT_WALL_TIME_MS);
    // History is kept per configuration file; the folder's shared store is where it starts from.
    expect(config.history).toEqual({
      enabled: true,
      path: join(cwd, '.codecall', 'history.mcp.json.sqlite'),
      key: '.mcp.json',
      migrateFrom: join(cwd, '.codecall', 'history.sqlite'),
      maxRuns: DEFAULT_HISTORY_MAX_RUNS,
    });
  });

  it('prefers codecall.json over .mcp.json, and --config over both', async () => {
    const cwd = dir({
      'codecall.json': { mcpServers: { a: { command: 'a' } } },
      '.mcp.json': { mcpServers: { b: { command: 'b' } } },
    });
    mkdirSync(join(cwd, 'sub'));
    writeFileSync(
      join(cwd, 'sub', 'other.json'),
      JSON.stringify({ mcpServers: { c: { command: 'c', cwd: 'x' } } }),
    );
    expect(Object.keys((await loadConfig({ cwd })).mcpServers)).toEqual(['a']);
    const other = await loadConfig({ cwd, path: 'sub/other.json' });
    expect(Object.keys(other.mcpServers)).toEqual(['c']);
    expect(other.mcpServers.c).toMatchObject({ cwd: join(cwd, 'sub', 'x') });
  });

  it('fails with CONFIG_NOT_FOUND naming where it looked and the fix', async () => {
    const cwd = dir({});
    const none = await rejected(loadConfig({ cwd }));
    expect(none.code).toBe('CONFIG_NOT_FOUND');
    expect(none.message).toContain('codecall.json or .mcp.json');
    expect(none.message).toContain('--config');
    const missing = await rejected(loadConfig({ cwd, path: 'nope.json' }));
    expect(missing.code).toBe('CONFIG_NOT_FOUND');
    expect(missing.message).toContain(join(cwd, 'nope.json'));
  });

  it('refuses a file past DEFAULT_CONFIG_MAX_BYTES before reading it, naming its size and the fix', async () => {
    const cwd = dir({});
    const big = join(cwd, 'big.json');
    // Sparse: the size is what the check reads, nothing is written.
    writeFileSync(big, '');
    truncateSync(big, DEFAULT_CONFIG_MAX_BYTES + 1);
    const error = await rejected(loadConfig({ cwd, path: 'big.json' }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(`${DEFAULT_CONFIG_MAX_BYTES + 1} bytes`);
    expect(error.message).toContain('Fix: shrink or replace the file, or pass --config <file>');
    // A device passes a size check (its size is 0): refused as not a regular file, unread.
    symlinkSync('/dev/zero', join(cwd, 'codecall.json'));
    const device = await rejected(loadConfig({ cwd }));
    expect(device.code).toBe('CONFIG_INVALID');
    expect(device.message).toContain('is not a regular file');
  });

  it("reads the search section's expansion gate and refuses a share outside 0-1", () => {
    const file = join(dir({}), 'codecall.json');
    const config = parseConfig(
      { mcpServers: {}, search: { expansionWhen: 'selective', expansionFlatShare: 0.4 } },
      { file, env: {} },
    );
    expect(config.search).toMatchObject({ expansionWhen: 'selective', expansionFlatShare: 0.4 });
    const error = thrown(() =>
      parseConfig({ mcpServers: {}, search: { expansionFlatShare: 2 } }, { file, env: {} }),
    );
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('search.expansionFlatShare');
  });

  it('reports invalid JSON with the file name', async () => {
    const cwd = dir({ 'codecall.json': '{ "mcpServers": { , } }' });
    const error = await rejected(loadConfig({ cwd }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(join(cwd, 'codecall.json'));
    expect(error.message).toContain('not valid JSON: line 1, column 19: ValueExpected');
  });

  it('keeps a "__proto__" server name of a file with comments as a key, so it is refused', async () => {
    const cwd = dir({ 'codecall.json': '// comment\n{ "mcpServers": { "__proto__": { "command": "x" } } }' });
    const error = await rejected(loadConfig({ cwd }));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain('server name "__proto__" is reserved');
  });
});

describe('parseConfig', () => {
  const file = '/project/codecall.json';

  it('expands ${VAR} and ${VAR:-default}', () => {
    const config = parseConfig(
      {
        mcpServers: {
          s: { command: '${BIN:-node}', args: ['${HOME_DIR}/x', '${EMPTY:-fallback}'], env: { K: '${KEY}' } },
        },
      },
      { file, env: { HOME_DIR: '/h', KEY: 'k', EMPTY: '' } },
    );
    expect(config.mcpServers.s).toMatchObject({
      command: 'node',
      args: ['/h/x', 'fallback'],
      env: { K: 'k' },
    });
  });

  it('names the file, the path and the variable when ${VAR} is unset', () => {
    const error = thrown(() =>
      parseConfig(
        { mcpServers: { s: { type: 'http', url: 'https://x', headers: { A: '${API_KEY}' } } } },
        { file, env: {} },
      ),
    );
    expect(error.code).toBe('CONFIG_ENV_MISSING');
    expect(error.message).toContain(file);
    expect(error.message).toContain('mcpServers.s.headers.A');
    expect(error.message).toContain('API_KEY');
    expect(error.message).toContain('${API_KEY:-default}');
  });

  it('nested defaults expand fully, only when used; $${ writes a literal ${', () => {
    const config = parseConfig(
      {
        mcpServers: {
          s: {
            command: 'node',
            args: [
              '${A:-${B}}',
              '${A:-${UNSET:-x}-y}',
              '${B:-${UNSET}}',
              '$${LITERAL}',
              'cost: $5',
              '$${A:-${B}}',
            ],
          },
        },
      },
      { file, env: { B: 'bee' } },
    );
    expect(config.mcpServers.s).toMatchObject({
      args: ['bee', 'x-y', 'bee', '${LITERAL}', 'cost: $5', '${A:-bee}'],
    });
  });

  it('malformed ${…} is an error naming the path and the fix, never a half-expanded string', () => {
    for (const bad of ['${A:-${B}', '${HOME', '${1}', '${A:=x}', 'pre ${ post']) {
      const error = thrown(() =>
        parseConfig({ mcpServers: { s: { command: 'node', args: [bad] } } }, { file, env: { B: 'b' } }),
      );
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toContain('mcpServers.s.args[0]');
      expect(error.message).toContain('write $${ for a literal ${');
    }
    // A nested ${VAR} that is used and unset still names the variable.
    const missing = thrown(() =>
      parseConfig({ mcpServers: { s: { command: '${A:-${NOPE}}' } } }, { file, env: {} }),
    );
    expect(missing.code).toBe('CONFIG_ENV_MISSING');
    expect(missing.message).toContain('NOPE');
  });

  it('refuses server names that are built-in names of objects, instead of dropping them', () => {
    const json = JSON.parse(
      '{"mcpServers": {"__proto__": {"command": "a"}, "constructor": {"command": "b"}, "ok": {"command": "c", "tools": {"__proto__": {"deferLoading": false}}}}}',
    ) as unknown;
    const error = thrown(() => parseConfig(json, { file, env: {} }));
    expect(error.code).toBe('CONFIG_INVALID');
    const paths = (error.details.issues as { path: string }[]).map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        expect.stringContaining('__proto__'),
        'mcpServers.constructor',
        expect.stringMatching(/^mcpServers\.ok\.tools/),
      ]),
    );
    expect(error.message).toContain('is reserved');
  });

  it('says what a wrong-typed value is, not "got nothing"', () => {
    const error = thrown(() =>
      parseConfig(
        {
          mcpServers: { s: { command: 5, args: ['x', true], deferLoading: 'yes' } },
          sandbox: { workers: '2' },
        },
        { file, env: {} },
      ),
    );
    const issues = Object.fromEntries(
      (error.details.issues as { path: string; message: string }[]).map((i) => [i.path, i.message]),
    );
    expect(issues['mcpServers.s.command']).toContain('expected a string, got a number (5)');
    expect(issues['mcpServers.s.args[1]']).toContain('got a boolean (true)');
    expect(issues['mcpServers.s.deferLoading']).toContain('expected a boolean, got a string ("yes")');
    expect(issues['sandbox.workers']).toContain('got a string ("2")');
    expect(error.message).not.toContain('got nothing');
  });

  it('history.path from a configuration file stays inside its folder; CODECALL_HISTORY_PATH places it anywhere', () => {
    const root = tempDir('codecall-history-path-');
    const project = join(root, 'project');
    mkdirSync(project);
    const at = join(project, 'codecall.json');
    const inside = parseConfig({ history: { path: 'data/h.sqlite' } }, { file: at, env: {} });
    expect(inside.history.path).toBe(join(project, 'data', 'h.sqlite'));
    for (const path of ['../other-app/cookies.sqlite', join(root, 'elsewhere.sqlite'), '.']) {
      const error = thrown(() => parseConfig({ history: { path } }, { file: at, env: {} }));
      expect(error.code).toBe('CONFIG_INVALID');
      expect(error.message).toContain('history.path');
      expect(error.message).toContain('CODECALL_HISTORY_PATH');
    }
    // A symbolic link inside the folder that leads out of it does not make a way around.
    symlinkSync(root, join(project, 'link'));
    expect(() => parseConfig({ history: { path: 'link/x.sqlite' } }, { file: at, env: {} })).toThrow(
      /leads outside/,
    );
    const user = parseConfig(
      { history: { path: '../other-app/cookies.sqlite' } },
      { file: at, env: { CODECALL_HISTORY_PATH: join(root, 'mine.sqlite') } },
    );
    expect(user.history.path).toBe(join(root, 'mine.sqlite'));
  });

  it('suggests the intended key for a typo', () => {
    const error = thrown(() =>
      parseConfig({ mcpServers: { s: { command: 'x', allowedCaller: ['direct'] } } }, { file, env: {} }),
    );
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(file);
    expect(error.message).toContain('mcpServers.s');
    expect(error.message).toContain('unknown key "allowedCaller"');
    expect(error.message).toContain('did you mean "allowedCallers"');
  });

  it('rejects top-level keys close to codecall keys, wrong types and bad enum values, naming each path', () => {
    const error = thrown(() =>
      parseConfig(
        {
          histroy: {},
          mcpServers: {
            s: { command: 'x', args: 'not-an-array', tools: { t: { allowedCallers: ['code'] } } },
          },
          sandbox: { wallTimeMs: -5 },
        },
        { file, env: {} },
      ),
    );
    expect(error.code).toBe('CONFIG_INVALID');
    const issues = error.details.issues as { path: string; message: string }[];
    const paths = issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        '(root)',
        'mcpServers.s.args',
        'mcpServers.s.tools.t.allowedCallers[0]',
        'sandbox.wallTimeMs',
      ]),
    );
    expect(issues.find((i) => i.path === '(root)')!.message).toContain('did you mean "history"');
    expect(issues.find((i) => i.path === 'mcpServers.s.args')!.message).toContain('expected an array');
    expect(issues.find((i) => i.path === 'mcpServers.s.tools.t.allowedCallers[0]')!.message).toContain(
      '"code_execution"',
    );
  });

  it('rejects a server with neither command nor url, and mixed transports', () => {
    const error = thrown(() =>
      parseConfig(
        {
          mcpServers: {
            empty: { args: [] },
            mixed: { command: 'x', url: 'https://x' },
            bad: { type: 'http', url: 'ftp://x' },
          },
        },
        { file, env: {} },
      ),
    );
    const issues = error.details.issues as { path: string; message: string }[];
    expect(issues.find((i) => i.path === 'mcpServers.empty')!.message).toMatch(/needs "command".*or "url"/);
    expect(issues.some((i) => i.path.startsWith('mcpServers.mixed'))).toBe(true);
    expect(issues.find((i) => i.path === 'mcpServers.bad.url')!.message).toContain('http');
  });

  it('rejects server names with a dot', () => {
    const error = thrown(() => parseConfig({ mcpServers: { 'a.b': { command: 'x' } } }, { file, env: {} }));
    expect(error.message).toContain('"a_b"');
  });

  it('resolves codecall keys, sandbox limits and history, and leaves disabled servers out', () => {
    const config = parseConfig(
      {
        mcpServers: {
          s: {
            command: 'x',
            allowedCallers: ['direct'],
            deferLoading: false,
            toolTimeoutMs: 5,
            maxConcurrentCalls: 2,
            tools: {
              t: {
                allowedCallers: ['code_execution'],
                inputExamples: [{ q: '${NOT_EXPANDED}' }],
                timeoutMs: 9,
              },
            },
          },
          off: { command: 'y', disabled: true },
        },
        sandbox: { mode: 'in-process', memoryMb: 64 },
        history: { enabled: false, path: 'h.sqlite', maxRuns: 50 },
        search: { limit: 3 },
        agent: { model: 'm', maxSteps: 4 },
        globalShortcut: 'Ctrl+Space',
      },
      { file, env: {} },
    );
    expect(config.mcpServers.s).toMatchObject({
      allowedCallers: ['direct'],
      deferLoading: false,
      toolTimeoutMs: 5,
      maxConcurrentCalls: 2,
      tools: {
        t: { allowedCallers: ['code_execution'], inputExamples: [{ q: '${NOT_EXPANDED}' }], timeoutMs: 9 },
      },
    });
    expect(config.mcpServers.off).toBeUndefined();
    expect(config.disabledServers).toEqual(['off']);
    expect(config.sandbox.mode).toBe('in-process');
    expect(config.sandbox.limits.memoryMb).toBe(64);
    expect(config.history).toEqual({
      enabled: false,
      path: '/project/h.sqlite',
      key: 'history.path',
      migrateFrom: undefined,
      maxRuns: 50,
    });
    expect(config.search).toMatchObject({ limit: 3, beamWidth: DEFAULT_BEAM_WIDTH, embeddings: undefined });
    expect(config.agent).toEqual({
      model: 'm',
      maxSteps: 4,
      maxOutputTokens: DEFAULT_PROVIDER_MAX_OUTPUT_TOKENS,
    });
  });

  it('sandbox.workerSpinUs: the default, 0 to turn the spin off, and a negative or fractional value named by its path', () => {
    expect(parseConfig({}, { file, env: {} }).sandbox.workerSpinUs).toBe(DEFAULT_SANDBOX_WORKER_SPIN_US);
    expect(parseConfig({ sandbox: { workerSpinUs: 0 } }, { file, env: {} }).sandbox.workerSpinUs).toBe(0);
    for (const workerSpinUs of [-5, 2.5]) {
      const error = thrown(() => parseConfig({ sandbox: { workerSpinUs } }, { file, env: {} }));
      const paths = (error.details.issues as { path: string }[]).map((issue) => issue.path);
      expect(paths).toEqual(['sandbox.workerSpinUs']);
    }
  });

  it('sizes sandbox workers: defaults, a range, a fixed "workers", and conflicts named with the fix', () => {
    const defaults = parseConfig({}, { file, env: {} }).sandbox;
    expect(defaults).toMatchObject({
      minWorkers: DEFAULT_SANDBOX_MIN_WORKERS,
      maxWorkers: Math.max(DEFAULT_SANDBOX_MIN_WORKERS, DEFAULT_SANDBOX_MAX_WORKERS),
      workerIdleMs: DEFAULT_SANDBOX_WORKER_IDLE_MS,
    });
    const range = parseConfig(
      { sandbox: { minWorkers: 2, maxWorkers: 6, workerIdleMs: 500 } },
      { file, env: {} },
    );
    expect(range.sandbox).toMatchObject({ minWorkers: 2, maxWorkers: 6, workerIdleMs: 500 });
    const fixed = parseConfig({ sandbox: { workers: 3 } }, { file, env: {} });
    expect(fixed.sandbox).toMatchObject({ minWorkers: 3, maxWorkers: 3 });
    // A minimum above the core count raises the default maximum with it.
    const many = DEFAULT_SANDBOX_MAX_WORKERS + 2;
    expect(parseConfig({ sandbox: { minWorkers: many } }, { file, env: {} }).sandbox.maxWorkers).toBe(many);
    const issues = (sandbox: object) =>
      thrown(() => parseConfig({ sandbox }, { file, env: {} })).details.issues as {
        path: string;
        message: string;
      }[];
    expect(issues({ workers: 2, maxWorkers: 4 })).toEqual([
      { path: 'sandbox.workers', message: expect.stringContaining('Fix: keep one of them') as string },
    ]);
    expect(issues({ minWorkers: 5, maxWorkers: 2 })).toEqual([
      {
        path: 'sandbox.minWorkers',
        message: expect.stringContaining('"minWorkers" (5) is above "maxWorkers" (2)') as string,
      },
    ]);
  });

  it('bounds stdio messages: maxMessageBytes, its default follows sandbox.maxToolResultBytes, stdio only', () => {
    const plain = parseConfig({ mcpServers: { a: { command: 'x' } } }, { file, env: {} });
    expect(plain.mcpServers.a).toMatchObject({ maxMessageBytes: DEFAULT_SERVER_MAX_MESSAGE_BYTES });
    expect(DEFAULT_SERVER_MAX_MESSAGE_BYTES).toBe(2 * DEFAULT_MAX_TOOL_RESULT_BYTES);
    const config = parseConfig(
      {
        mcpServers: { a: { command: 'x' }, b: { command: 'x', maxMessageBytes: 1024 } },
        sandbox: { maxToolResultBytes: 100 * 1_048_576 },
      },
      { file, env: {} },
    );
    expect(config.mcpServers.a).toMatchObject({ maxMessageBytes: 200 * 1_048_576 });
    expect(config.mcpServers.b).toMatchObject({ maxMessageBytes: 1024 });
    const error = thrown(() =>
      parseConfig({ mcpServers: { r: { url: 'https://x', maxMessageBytes: 5 } } }, { file, env: {} }),
    );
    expect(error.message).toContain('mcpServers.r.maxMessageBytes');
    const typo = thrown(() =>
      parseConfig({ mcpServers: { a: { command: 'x', maxMessageByte: 5 } } }, { file, env: {} }),
    );
    expect(typo.message).toContain('did you mean "maxMessageBytes"');
  });
});
