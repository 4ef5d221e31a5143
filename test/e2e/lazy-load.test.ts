/**
 * What each entry point loads (issue 11, "Load only what a command uses"): a real Node process
 * with a module resolve hook that prints every package and dist/ module it loads.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempRoot } from './temp-root.js';
import { tempDir } from '../fixtures/temp-dir.js';

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
const heavy = [
  'pkg:@anthropic-ai/sdk',
  'pkg:openai',
  'pkg:@google/genai',
  'pkg:@aws-sdk/client-bedrock-runtime',
  'pkg:js-tiktoken',
  'pkg:bullmq',
  'pkg:ioredis',
];

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

  it("import('codecall') loads no provider SDK or tokenizer until one is used", () => {
    const { loaded, stdout } = loads([
      '--input-type=module',
      '-e',
      "const m = await import('./dist/index.js'); console.log(typeof m.createLanguageModel, typeof m.countTokens);",
    ]);
    expect(stdout).toContain('function');
    expect(loaded).toContain('dist:index.js');
    expect(heavy.filter((m) => loaded.has(m))).toEqual([]);
  });
});
