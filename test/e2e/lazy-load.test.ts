/**
 * What each entry point loads (issue 11, "Load only what a command uses"; issue 31, "A package
 * users can take in parts"): a real Node process with a module resolve hook that prints every
 * package and dist/ module it loads, and one that hides the optional peer dependencies, as an
 * install without them has none.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempRoot } from './temp-root.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { hidePackagesHook } from '../fixtures/hide-packages.js';

// Commands run from a temp copy of the root: `exec` writes its usage history next to the
// configuration (examples/.codecall/), never into the work tree.
const temp = tempRoot();
const root = temp.root;
afterAll(() => temp[Symbol.dispose]());
const hook = join(tempDir('codecall-lazy-'), 'trace.mjs');
writeFileSync(
  hook,
  `import { registerHooks } from 'node:module';
import { writeSync } from 'node:fs';
registerHooks({
  resolve(spec, ctx, next) {
    const r = next(spec, ctx);
    const pkg = r.url.match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)/);
    const dist = r.url.split('/dist/')[1];
    if (pkg) writeSync(2, 'LOADED pkg:' + pkg[1] + '\\n');
    else if (r.url.startsWith('file:') && dist) writeSync(2, 'LOADED dist:' + dist + '\\n');
    return r;
  },
});
`,
);

/** The packages and dist modules `node <args>` loads, with its stdout. */
/** How many processes loaded the CLI (the launcher, plus its re-executed child if any). */
const cliProcesses = (stderr: string): number =>
  stderr.split('\n').filter((l) => l === 'LOADED dist:bundle/main.js').length;

function loads(
  args: string[],
  nodeFlags: string[] = ['--no-node-snapshot'],
): { loaded: Set<string>; stdout: string; stderr: string; status: number | null } {
  const result = spawnSync(process.execPath, [...nodeFlags, '--import', pathToFileURL(hook).href, ...args], {
    cwd: root,
    encoding: 'utf8',
  });
  const loaded = new Set(
    result.stderr
      .split('\n')
      .filter((line) => line.startsWith('LOADED '))
      .map((line) => line.slice('LOADED '.length)),
  );
  return { loaded, stdout: result.stdout, stderr: result.stderr, status: result.status };
}

const main = join('dist', 'cli', 'main.js');
/** Files of dist/bundle/ that `codecall exec` loads (entry, command chunk, shared chunks). */
const MAX_EXEC_BUNDLE_CHUNKS = 60;
/** Files of dist/bundle/ that `codecall --help` loads (7 today; one per help text would be 17). */
const MAX_HELP_BUNDLE_FILES = 10;
/** The optional peer dependencies (package.json `peerDependenciesMeta`), the framework adapters' included. */
const OPTIONAL_PACKAGES = [
  '@anthropic-ai/sdk',
  'openai',
  '@google/genai',
  '@aws-sdk/client-bedrock-runtime',
  'js-tiktoken',
  'bullmq',
  'ioredis',
  'pg',
  'pg-boss',
  '@bull-board/api',
  '@bull-board/express',
  '@opentelemetry/api',
  'ai',
  '@ai-sdk/provider',
  '@openai/agents',
  '@viz-js/viz',
  '@modelcontextprotocol/server',
  'onnxruntime-node',
  '@huggingface/tokenizers',
];
const heavy = OPTIONAL_PACKAGES.map((name) => `pkg:${name}`);

// Hides the optional packages with Node's own not-installed errors (test/fixtures/hide-packages.ts;
// a test below holds the hook's errors to Node's).
const hide = hidePackagesHook(OPTIONAL_PACKAGES);

/** Runs `node <args>` with the optional packages hidden. */
function withoutOptional(args: string[]): { stdout: string; stderr: string; status: number | null } {
  const result = spawnSync(process.execPath, ['--no-node-snapshot', '--import', hide, ...args], {
    cwd: root,
    encoding: 'utf8',
  });
  return { stdout: result.stdout, stderr: result.stderr, status: result.status };
}

describe('lazy loading', () => {
  it('codecall --help and <cmd> --help load no command implementation and no package', () => {
    for (const args of [['--help'], ['serve', '--help'], ['--version']]) {
      const { loaded, stdout, status } = loads([main, ...args]);
      expect(status).toBe(0);
      expect(stdout.length).toBeGreaterThan(0);
      expect([...loaded].filter((m) => m.startsWith('pkg:'))).toEqual([]);
      expect([...loaded].filter((m) => /^dist:cli\/commands\/[\w-]+\.js$/.test(m))).toEqual([]);
    }
    expect(loads([main, 'serve', '--help']).stdout).toContain('Usage: codecall serve');
  });

  it('the launcher runs commands itself, and re-executes Node only for an in-process sandbox', () => {
    const launcher = join('bin', 'codecall.js');
    for (const args of [['--help'], ['exec', '--help'], ['--version']]) {
      const { stderr, stdout, status } = loads([launcher, ...args], []);
      expect(status).toBe(0);
      expect(stdout.length).toBeGreaterThan(0);
      expect(cliProcesses(stderr)).toBe(1);
    }
    // Process mode (the default): the command runs in the launcher's own process.
    const processMode = loads(
      [launcher, 'exec', 'no-such-script.js', '--config', 'examples/codecall.json'],
      [],
    );
    expect(processMode.stderr).toContain('cannot read the script');
    expect(cliProcesses(processMode.stderr)).toBe(1);
    // An in-process sandbox needs --no-node-snapshot in the CLI process: a re-executed child
    // (the hook is passed on with the Node flags).
    const dir = tempDir('codecall-lazy-');
    const config = join(dir, 'codecall.json');
    writeFileSync(config, JSON.stringify({ mcpServers: {}, sandbox: { mode: 'in-process' } }));
    const inProcess = loads([launcher, 'exec', 'no-such-script.js', '--config', config], []);
    expect(inProcess.stderr).toContain('cannot read the script');
    expect(cliProcesses(inProcess.stderr)).toBe(2);
  });

  it('codecall exec loads no provider SDK, tokenizer, job queue, MCP server stack or agent', () => {
    const { loaded, stdout, status } = loads([
      main,
      'exec',
      'examples/scripts/over-budget.ts',
      '--config',
      'examples/codecall.json',
    ]);
    expect(status).toBe(0);
    expect(stdout).toContain('Scanned 2400 line items');
    // Process mode: isolates live in the worker processes; the host never loads isolated-vm.
    expect(loaded).toContain('dist:isolate/sandbox-pool.js');
    expect(loaded.has('pkg:isolated-vm')).toBe(false);
    expect(heavy.filter((m) => loaded.has(m))).toEqual([]);
    expect(loaded.has('pkg:hono')).toBe(false);
    expect([...loaded].filter((m) => /^dist:(agent|server|jobs|providers)\//.test(m))).toEqual([]);
    // A stdio configuration: the MCP client's HTTP transports (OAuth, EventSource) stay unloaded.
    expect(
      ['pkg:eventsource', 'pkg:pkce-challenge', 'pkg:content-type'].filter((m) => loaded.has(m)),
    ).toEqual([]);
  });

  it("the launcher keeps compiled modules in the user's cache folder (XDG_CACHE_HOME), not the shared temp folder", () => {
    const cache = tempDir('codecall-xdg-');
    const env = { ...process.env, XDG_CACHE_HOME: cache, NODE_COMPILE_CACHE: undefined };
    const result = spawnSync(process.execPath, [join('bin', 'codecall.js'), '--help'], {
      cwd: root,
      encoding: 'utf8',
      env,
    });
    expect(result.status).toBe(0);
    const dir = join(cache, 'codecall', 'node-compile-cache');
    const versions = readdirSync(dir);
    expect(versions).toHaveLength(1);
    // One cache entry per module compiled: the bundle's entry and its chunks.
    expect(readdirSync(join(dir, versions[0]!)).length).toBeGreaterThan(1);
  });

  it('the launcher answers --help from a few bundle files (the help texts in one chunk)', () => {
    const { loaded, stdout, status } = loads([join('bin', 'codecall.js'), '--help'], []);
    expect(status).toBe(0);
    expect(stdout).toContain('Usage: codecall');
    const dist = [...loaded].filter((m) => m.startsWith('dist:'));
    expect(dist).toContain('dist:bundle/main.js');
    expect(dist.filter((m) => !m.startsWith('dist:bundle/'))).toEqual([]);
    expect(dist.length).toBeLessThanOrEqual(MAX_HELP_BUNDLE_FILES);
    expect([...loaded].filter((m) => m.startsWith('pkg:'))).toEqual([]);
  });

  it('the launcher runs exec from the CLI bundle: a few chunks, bundled packages not loaded one by one', () => {
    const { loaded, stdout, status } = loads(
      [
        join('bin', 'codecall.js'),
        'exec',
        'examples/scripts/over-budget.ts',
        '--config',
        'examples/codecall.json',
      ],
      [],
    );
    expect(status).toBe(0);
    expect(stdout).toContain('Scanned 2400 line items');
    const dist = [...loaded].filter((m) => m.startsWith('dist:'));
    expect(dist).toContain('dist:bundle/main.js');
    expect(dist.filter((m) => !m.startsWith('dist:bundle/'))).toEqual([]);
    expect(dist.length).toBeLessThanOrEqual(MAX_EXEC_BUNDLE_CHUNKS);
    // Packages the bundle holds are not resolved from node_modules; the rest stay unloaded.
    expect(['pkg:zod', 'pkg:@modelcontextprotocol/sdk', 'pkg:ajv'].filter((m) => loaded.has(m))).toEqual([]);
    expect(heavy.filter((m) => loaded.has(m))).toEqual([]);
    expect(loaded.has('pkg:hono')).toBe(false);
  });

  it("import('codecall') and the codecall/server and codecall/testing entries load none of the optional packages", () => {
    const { loaded, stdout } = loads([
      '--input-type=module',
      '-e',
      "const m = await import('./dist/index.js'); console.log(typeof m.createLanguageModel, typeof m.CodecallRuntime);" +
        "const s = await import('./dist/server/index.js'); const t = await import('./dist/testing/index.js');" +
        'console.log(typeof s.createCodecallServer, typeof t.ScriptedLanguageModel);',
    ]);
    expect(stdout).toBe('function function\nfunction function\n');
    expect(loaded).toContain('dist:index.js');
    expect(loaded).toContain('dist:server/index.js');
    // The hook sees every package resolved: none of the optional list may be among them.
    expect(loaded.has('pkg:zod')).toBe(true);
    expect(heavy.filter((m) => loaded.has(m))).toEqual([]);
  });

  it("the hook hides a package with Node's own not-found error: its code, message and require stack", () => {
    // Each hidden package beside a package that is truly not installed (scoped and not), loaded
    // the same ways; their errors must match once the name is swapped.
    const probe = withoutOptional([
      '--input-type=module',
      '-e',
      `import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const errors = {};
for (const name of ['openai', 'codecall-absent-package', '@google/genai', '@codecall-absent/package']) {
  errors[name] = [];
  for (const load of [() => import(name), () => import(name + '/sub/x.js'), async () => require(name), async () => require(name + '/sub/x.js')]) {
    try {
      await load();
      errors[name].push('loaded');
    } catch (error) {
      errors[name].push({ code: error.code, message: error.message.replaceAll(name, '<name>'), requireStack: error.requireStack });
    }
  }
}
console.log(JSON.stringify(errors));`,
    ]);
    expect(probe.stderr).toBe('');
    const errors = JSON.parse(probe.stdout) as Record<string, { code: string; message: string }[]>;
    expect(errors['codecall-absent-package']?.map((error) => error.code)).toEqual([
      'ERR_MODULE_NOT_FOUND',
      'ERR_MODULE_NOT_FOUND',
      'MODULE_NOT_FOUND',
      'MODULE_NOT_FOUND',
    ]);
    expect(errors['codecall-absent-package']?.[0]?.message).toMatch(
      /^Cannot find package '<name>' imported from /,
    );
    expect(errors['openai']).toEqual(errors['codecall-absent-package']);
    expect(errors['@google/genai']).toEqual(errors['@codecall-absent/package']);
  });

  it("without the optional packages: import('codecall') works, and a provider names its install command (PACKAGE_MISSING)", () => {
    const probe = withoutOptional([
      '--input-type=module',
      '-e',
      `const { createLanguageModel, isCodecallError } = await import('./dist/index.js');
for (const spec of ['openai:gpt-4.1', 'anthropic:claude-sonnet-4-6', 'gemini:gemini-2.5-flash', 'bedrock:anthropic.claude-sonnet-4']) {
  const model = createLanguageModel(spec, { apiKey: 'k', region: 'us-east-1' });
  try {
    await model.generate({ messages: [{ role: 'user', content: 'hi' }], tools: [] });
    console.log(spec, 'answered');
  } catch (error) {
    console.log(spec, isCodecallError(error) ? error.code : 'other', error.details?.install, error.message);
  }
}`,
    ]);
    expect(probe.stderr).toBe('');
    const lines = probe.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(
      /^openai:gpt-4\.1 PACKAGE_MISSING npm install openai .*run `npm install openai`/,
    );
    expect(lines[1]).toMatch(/^anthropic:\S+ PACKAGE_MISSING npm install @anthropic-ai\/sdk /);
    expect(lines[2]).toMatch(/^gemini:\S+ PACKAGE_MISSING npm install @google\/genai /);
    expect(lines[3]).toMatch(/^bedrock:\S+ PACKAGE_MISSING npm install @aws-sdk\/client-bedrock-runtime /);
  });

  it('without the optional packages: each jobs backend and the dashboard name their install command (PACKAGE_MISSING)', () => {
    const probe = withoutOptional([
      '--input-type=module',
      '-e',
      `const jobs = await import('./dist/jobs/index.js');
const tries = {
  bullmq: () => jobs.createJobClient({ connection: 'redis://127.0.0.1:1' }),
  worker: () => jobs.startWorker({ connection: 'redis://127.0.0.1:1', runtimes: {} }),
  dashboard: () => jobs.openJobDashboard({ connection: 'redis://127.0.0.1:1' }),
  postgres: () => jobs.createPgJobClient({ connection: 'postgres://127.0.0.1:1/x' }),
  pgworker: () => jobs.startPgWorker({ connection: 'postgres://127.0.0.1:1/x', runtimes: {} }),
};
for (const [name, open] of Object.entries(tries)) {
  try {
    await open();
    console.log(name, 'opened');
  } catch (error) {
    console.log(name, error.code ?? 'other', error.details?.install ?? '-', error.message);
  }
}`,
    ]);
    expect(probe.stderr).toBe('');
    const lines = probe.stdout.trim().split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^bullmq PACKAGE_MISSING npm install bullmq The BullMQ jobs backend/);
    expect(lines[1]).toMatch(/^worker PACKAGE_MISSING npm install bullmq /);
    expect(lines[2]).toMatch(/^dashboard PACKAGE_MISSING npm install bullmq The jobs dashboard/);
    expect(lines[3]).toMatch(/^postgres PACKAGE_MISSING npm install pg-boss The PostgreSQL jobs backend/);
    expect(lines[4]).toMatch(/^pgworker PACKAGE_MISSING npm install pg-boss /);
  });

  it('without onnxruntime-node: the local embedder names its install command (PACKAGE_MISSING), and a search still answers', () => {
    const probe = withoutOptional([
      '--input-type=module',
      '-e',
      `const { createOnnxEmbedder, createToolSearch } = await import('./dist/index.js');
const embed = createOnnxEmbedder({ modelPath: 'models/model.onnx' });
try {
  await embed(['plot my sales']);
  console.log('embedded');
} catch (error) {
  console.log(error.code, error.details?.install, error.message);
}
const search = createToolSearch({ tools: [{ name: 'mail.send_email', description: 'Send an email.' }], embed });
const found = await search.searchAsync('send email');
console.log(found.hits.map((hit) => hit.name).join(','), '|', found.embeddingError);`,
    ]);
    expect(probe.stderr).toBe('');
    const lines = probe.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(
      /^PACKAGE_MISSING npm install onnxruntime-node The local \(ONNX\) embedder .*run `npm install onnxruntime-node`/,
    );
    expect(lines[1]).toMatch(/^mail\.send_email \| .*npm install onnxruntime-node/);
  });

  it('without @viz-js/viz: `codecall graph --format svg` names its install command and reads nothing', () => {
    const history = join(tempDir('codecall-lazy-'), 'history.sqlite');
    const svg = withoutOptional([main, 'graph', '--format', 'svg', '--history', history]);
    expect(svg.status).toBe(2);
    expect(svg.stdout).toBe('');
    expect(svg.stderr).toBe(
      'codecall graph: --format svg needs the @viz-js/viz package, which is not installed: run `npm install @viz-js/viz`.\n',
    );
    // The other formats need no package.
    const dot = withoutOptional([main, 'graph', '--format', 'dot', '--history', history]);
    expect(dot.status, dot.stderr).toBe(0);
    expect(dot.stdout).toMatch(/^digraph codecall \{/);
  });

  it('without js-tiktoken: `codecall run --model demo` answers, its token counts labelled an estimate', () => {
    const args = [
      main,
      'run',
      'Which team members exceeded their Q3 travel budget?',
      '--model',
      'demo',
      '--config',
      'examples/codecall.json',
    ];
    const text = withoutOptional(args);
    expect(text.status, text.stderr).toBe(0);
    expect(text.stdout).toContain('exceeded their Q3 travel budget');
    expect(text.stderr).toMatch(
      /tokens: [\d,]+ in context; .* \(estimated: npm install js-tiktoken to count\)/,
    );
    const json = withoutOptional([...args, '--json']);
    expect(json.status, json.stderr).toBe(0);
    const result = JSON.parse(json.stdout) as { savings: { tokenizer: string; contextTokens: number } };
    expect(result.savings.tokenizer).toBe('estimate');
    expect(result.savings.contextTokens).toBeGreaterThan(0);
  }, 120_000);
});
