/**
 * Other clients' allow/deny lists and `exec`'s progress, as a user meets them: the real bin
 * (dist, after `npm run build`), the real stdio expense server (examples/expense-server), a
 * Windsurf-style JSON file and a Codex `config.toml`; progress under a real pseudo-terminal
 * (`script` from util-linux).
 */
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../fixtures/temp-dir.js';
import { REPO_ROOT, tempRoot } from './temp-root.js';

/** Each test spawns codecall and an MCP server several times: generous at load 10. */
const E2E_TIMEOUT_MS = 240_000;

const temp = tempRoot();
afterAll(() => temp[Symbol.dispose]());
const ROOT = temp.root;
const BIN = join(REPO_ROOT, 'bin', 'codecall.js');
const SERVER = join(ROOT, 'examples', 'expense-server', 'server.mjs');

function codecall(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? -1, stdout, stderr }));
    child.stdin.end('');
  });
}

/** A script that calls a switched-off tool from code, catches the refusal, then calls an allowed one. */
const SCRIPT = `
try {
  await tools.expenses.get_expenses({ memberId: 'm1', quarter: 'Q3' });
  console.log('called get_expenses');
} catch (error) {
  console.log('refused: ' + error.message);
}
const { members } = await tools.expenses.get_team_members();
console.log('members: ' + members.length);
`;

function project(files: Record<string, string>): string {
  const dir = tempDir('codecall-client-policy-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe("other clients' deny lists hold for code", () => {
  it(
    "Windsurf's disabledTools: a script's call is refused naming the key; other tools work",
    async () => {
      const dir = project({
        'mcp_config.json': JSON.stringify({
          mcpServers: {
            expenses: { command: process.execPath, args: [SERVER], disabledTools: ['get_expenses'] },
          },
        }),
        'script.js': SCRIPT,
      });
      const result = await codecall(['exec', 'script.js', '--config', 'mcp_config.json'], dir);
      // One notice says the list was kept; the rule itself is in `config check`.
      expect(result.stderr).toBe(
        "codecall: kept 1 setting of other clients' allow/deny lists as codecall policy (codecall config check shows each): mcpServers.expenses.disabledTools.\n",
      );
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(
        'refused: Tool expenses.get_expenses may not be called from code: mcpServers.expenses.disabledTools switches it off',
      );
      expect(result.stdout).not.toContain('called get_expenses');
      expect(result.stdout).toContain('members: 20');
      // Uncaught, the refusal ends the run: exit 1, the key on stderr.
      writeFileSync(
        join(dir, 'bare.js'),
        "await tools.expenses.get_expenses({ memberId: 'm1', quarter: 'Q3' });",
      );
      const bare = await codecall(['exec', 'bare.js', '--config', 'mcp_config.json'], dir);
      expect(bare.code).toBe(1);
      expect(bare.stderr).toContain('mcpServers.expenses.disabledTools switches it off');
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'Codex config.toml: enabled_tools leaves every other tool off; config check shows the mapping',
    async () => {
      const dir = project({
        'config.toml': [
          '[mcp_servers.expenses]',
          `command = ${JSON.stringify(process.execPath)}`,
          `args = [${JSON.stringify(SERVER)}]`,
          'tool_timeout_sec = 30',
          'enabled_tools = ["get_team_members"]',
          '',
        ].join('\n'),
        'script.js': SCRIPT,
      });
      const result = await codecall(['exec', 'script.js', '--config', 'config.toml'], dir);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain(
        'refused: Tool expenses.get_expenses may not be called from code: mcp_servers.expenses.enabled_tools switches it off',
      );
      expect(result.stdout).toContain('members: 20');
      const check = await codecall(['config', 'check', '--config', 'config.toml'], dir);
      expect(check.code).toBe(0);
      expect(check.stdout).toContain("format: Codex's, read as codecall's mcpServers\n");
      expect(check.stdout).toContain(
        "other clients' allow/deny lists, kept as codecall policy:\n" +
          '  mcp_servers.expenses.enabled_tools → expenses: only get_team_members callable; every other tool never callable\n',
      );
      // `codecall tools` lists the switched-off tools as callable by nobody.
      const tools = await codecall(['tools', '--json', '--config', 'config.toml'], dir);
      const listed = JSON.parse(tools.stdout) as { tools: { name: string; allowedCallers: string[] }[] };
      expect(listed.tools.find((t) => t.name === 'expenses.get_expenses')?.allowedCallers).toEqual([]);
      expect(listed.tools.find((t) => t.name === 'expenses.get_team_members')?.allowedCallers).toContain(
        'code_execution',
      );
    },
    E2E_TIMEOUT_MS,
  );
});

const hasScript = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

/** Runs `codecall <args>` with stdin, stdout and stderr on a pseudo-terminal; returns what it showed. */
function onTerminal(args: string[], cwd: string): { code: number; shown: string } {
  const quote = (word: string): string => `'${word.replaceAll("'", "'\\''")}'`;
  const command = [process.execPath, BIN, ...args].map(quote).join(' ');
  const run = spawnSync('script', ['-qec', command, '/dev/null'], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, TERM: 'dumb' },
    timeout: E2E_TIMEOUT_MS / 3,
  });
  return { code: run.status ?? -1, shown: run.stdout.replaceAll('\r\n', '\n') };
}

describe.skipIf(!hasScript)('exec progress on a terminal', () => {
  it(
    'reports finished tool calls with the elapsed time on a terminal; --quiet and a pipe show none',
    async () => {
      const progress = /^codecall exec: ✓ expenses\.get_\w+( \(\+\d+ more calls?\))? · \d+(\.\d)? m?s$/m;
      const shown = onTerminal(
        ['exec', 'examples/scripts/over-budget.ts', '--config', 'examples/codecall.json'],
        ROOT,
      );
      expect(shown.code).toBe(0);
      expect(shown.shown).toMatch(progress);
      expect(shown.shown).toMatch(/^Scanned 2400 line items/m);
      const quiet = onTerminal(
        ['exec', 'examples/scripts/over-budget.ts', '--config', 'examples/codecall.json', '--quiet'],
        ROOT,
      );
      expect(quiet.code).toBe(0);
      expect(quiet.shown).not.toContain('codecall exec:');
      expect(quiet.shown).toMatch(/^Scanned 2400 line items/m);
      const piped = await codecall(
        ['exec', 'examples/scripts/over-budget.ts', '--config', 'examples/codecall.json'],
        ROOT,
      );
      expect(piped.code).toBe(0);
      expect(piped.stderr).toBe('');
    },
    E2E_TIMEOUT_MS,
  );
});
