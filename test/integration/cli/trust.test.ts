/**
 * A configuration found in the working directory starts its servers only with consent: refused
 * without a terminal (exit 2, naming --trust), allowed by --trust, CODECALL_TRUST=1, --config,
 * or a "y" at the prompt, which is remembered per file and content in the state directory.
 * Runs the CLI's `main` in-process; the "server" writes a marker file when it is started.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { tempDir } from '../../fixtures/temp-dir.js';

function project(): { dir: string; marker: string; state: string; write: (extra?: string) => void } {
  const dir = tempDir('codecall-trust-');
  const marker = join(dir, 'started');
  const state = tempDir('codecall-state-');
  const write = (extra = ''): void =>
    writeFileSync(
      join(dir, '.mcp.json'),
      JSON.stringify({
        mcpServers: {
          cloned: {
            command: process.execPath,
            args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, ${JSON.stringify(extra)})`],
          },
        },
        history: { enabled: false },
      }),
    );
  write();
  return { dir, marker, state, write };
}

async function cli(
  argv: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv; tty?: boolean; answer?: string },
): Promise<{ code: number; err: string }> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  let err = '';
  stderr.on('data', (d: Buffer) => {
    err += d.toString();
    if (options.answer !== undefined && err.includes('[y/N]')) stdin.write(options.answer);
  });
  stdout.resume();
  if (options.answer === undefined) stdin.end();
  if (options.tty) {
    Object.assign(stdin, { isTTY: true });
    Object.assign(stderr, { isTTY: true });
  }
  const code = await main(argv, {
    stdout,
    stderr,
    stdin,
    cwd: options.cwd,
    env: options.env,
    signal: new AbortController().signal,
  });
  return { code, err };
}

describe('consent for a discovered configuration', () => {
  it('refuses without a terminal, starting nothing, and names the flag', async () => {
    const p = project();
    const env = { XDG_STATE_HOME: p.state };
    for (const command of [['tools'], ['search', 'anything'], ['exec', '-'], ['serve']]) {
      const result = await cli(command, { cwd: p.dir, env });
      expect(result.code, command.join(' ')).toBe(2);
      expect(result.err).toContain('--trust');
      expect(result.err).toContain('CODECALL_TRUST=1');
      expect(result.err).toContain(`cloned: runs ${process.execPath} -e`);
    }
    expect(existsSync(p.marker)).toBe(false);
  });

  it('asks for every file loadConfig would start servers from: YAML text, a Zed or Codex layout', async () => {
    const p = project();
    const env = { XDG_STATE_HOME: p.state };
    const start = (name: string): { command: string; args: string[] } => ({
      command: process.execPath,
      args: ['-e', `require('fs').writeFileSync(${JSON.stringify(p.marker)}, ${JSON.stringify(name)})`],
    });
    const yaml = start('yaml');
    const layouts: Array<[string, string]> = [
      // YAML in a file named .json: loadConfig reads it (it sniffs the format) and would start it.
      [
        'yaml: runs',
        `mcpServers:\n  yaml:\n    command: ${JSON.stringify(yaml.command)}\n    args: ${JSON.stringify(yaml.args)}\n`,
      ],
      ['zed: runs', JSON.stringify({ context_servers: { zed: { source: 'custom', ...start('zed') } } })],
      ['codex: runs', JSON.stringify({ mcp_servers: { codex: start('codex') } })],
    ];
    for (const [listed, text] of layouts) {
      writeFileSync(join(p.dir, '.mcp.json'), text);
      const result = await cli(['tools'], { cwd: p.dir, env });
      expect(result.code, listed).toBe(2);
      expect(result.err).toContain(listed);
      expect(result.err).toContain('--trust');
    }
    expect(existsSync(p.marker)).toBe(false);
  });

  it("asks the same for other clients' layouts: VS Code's servers, Windsurf's serverUrl", async () => {
    const p = project();
    const env = { XDG_STATE_HOME: p.state };
    writeFileSync(
      join(p.dir, '.mcp.json'),
      JSON.stringify({
        servers: {
          cloned: {
            command: process.execPath,
            args: ['-e', `require('fs').writeFileSync(${JSON.stringify(p.marker)}, '')`],
          },
          remote: { serverUrl: 'https://mcp.example.com/mcp' },
        },
        history: { enabled: false },
      }),
    );
    const result = await cli(['tools'], { cwd: p.dir, env });
    expect(result.code).toBe(2);
    expect(result.err).toContain(`cloned: runs ${process.execPath} -e`);
    expect(result.err).toContain('remote: connects to https://mcp.example.com/mcp');
    expect(existsSync(p.marker)).toBe(false);
  });

  it('asks the same for a file with comments (which loadConfig reads)', async () => {
    const p = project();
    const env = { XDG_STATE_HOME: p.state };
    const command = JSON.stringify(process.execPath);
    const script = JSON.stringify(`require('fs').writeFileSync(${JSON.stringify(p.marker)}, '')`);
    writeFileSync(
      join(p.dir, '.mcp.json'),
      `// cloned\n{ "mcpServers": { "cloned": { "command": ${command}, "args": ["-e", ${script}], }, }, "history": { "enabled": false } }`,
    );
    const result = await cli(['tools'], { cwd: p.dir, env });
    expect(result.code).toBe(2);
    expect(result.err).toContain(`cloned: runs ${process.execPath} -e`);
    expect(existsSync(p.marker)).toBe(false);
  });

  it('--trust, CODECALL_TRUST=1 and --config each count as consent', async () => {
    const p = project();
    const env = { XDG_STATE_HOME: p.state };
    await cli(['tools', '--trust'], { cwd: p.dir, env });
    expect(existsSync(p.marker)).toBe(true);
    rmSync(p.marker);
    await cli(['tools'], { cwd: p.dir, env: { ...env, CODECALL_TRUST: '1' } });
    expect(existsSync(p.marker)).toBe(true);
    rmSync(p.marker);
    await cli(['tools', '--config', '.mcp.json'], { cwd: p.dir, env });
    expect(existsSync(p.marker)).toBe(true);
    // None of these is remembered: the next plain run is refused again.
    rmSync(p.marker);
    expect((await cli(['tools'], { cwd: p.dir, env })).code).toBe(2);
    expect(existsSync(p.marker)).toBe(false);
  });

  it('asks on a terminal; "y" is remembered until the file changes, "n" starts nothing', async () => {
    const p = project();
    const env = { XDG_STATE_HOME: p.state };
    const no = await cli(['tools'], { cwd: p.dir, env, tty: true, answer: 'n\n' });
    expect(no.code).toBe(2);
    expect(no.err).toContain('Start them? [y/N]');
    expect(existsSync(p.marker)).toBe(false);
    const yes = await cli(['tools'], { cwd: p.dir, env, tty: true, answer: 'y\n' });
    expect(yes.err).toContain('Start them? [y/N]');
    expect(existsSync(p.marker)).toBe(true);
    const remembered = JSON.parse(
      readFileSync(join(p.state, 'codecall', 'trusted-configs.json'), 'utf8'),
    ) as {
      approved: Record<string, string>;
    };
    expect(Object.values(remembered.approved)).toHaveLength(1);
    rmSync(p.marker);
    // Approved: no question, no flag needed, even without a terminal.
    const again = await cli(['tools'], { cwd: p.dir, env });
    expect(again.err).not.toContain('[y/N]');
    expect(existsSync(p.marker)).toBe(true);
    rmSync(p.marker);
    // The file changed (someone pulled a new command): asked, refused without a terminal.
    p.write('changed');
    expect((await cli(['tools'], { cwd: p.dir, env })).code).toBe(2);
    expect(existsSync(p.marker)).toBe(false);
  });
});
