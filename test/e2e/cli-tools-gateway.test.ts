/**
 * `codecall tools` shows how `codecall serve` names what it passes through: the pass-through name
 * of each tool, and per server the pattern of its prompt names and resource URIs, namespaced by
 * default and original with `serve.originalNames` (the real bin, the conformance fixture server
 * over stdio).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, ROOT } from './serve-helpers.js';

const run = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'codecall-tools-gateway-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function tools(serve: object, ...args: string[]): Promise<string> {
  const configPath = join(dir, `codecall-${JSON.stringify(serve).length}.json`);
  writeFileSync(
    configPath,
    JSON.stringify({
      mcpServers: {
        fixture: {
          command: process.execPath,
          args: [join(ROOT, 'test', 'fixtures', 'servers', 'conformance-server.mjs')],
          deferLoading: false,
        },
      },
      history: { enabled: false },
      serve,
    }),
  );
  const { stdout } = await run(process.execPath, [BIN, 'tools', '--config', configPath, ...args], {
    cwd: dir,
  });
  return stdout;
}

describe('codecall tools and the gateway names', () => {
  it('shows pass-through names, prompt and resource patterns, and the code-only read_resource', async () => {
    const plain = await tools({});
    expect(plain).toContain('  codecall serve: prompts as fixture__<prompt>, resources as fixture+<uri>\n');
    expect(plain).toMatch(
      /fixture\.test_simple_text\s+tools\.fixture\.test_simple_text\s+direct\+code\s+.*\[serve: fixture__test_simple_text\]/,
    );
    expect(plain).toMatch(/fixture\.read_resource\s+tools\.fixture\.read_resource\s+code\s+Reads a resource/);
    expect(plain).not.toMatch(/\[serve: fixture__read_resource\]/);

    const original = await tools({ originalNames: true }, '--json');
    const parsed = JSON.parse(original) as {
      servers: { name: string; serve?: { prompts?: string; resources?: string } }[];
      tools: { name: string; serveName?: string }[];
    };
    expect(parsed.servers.find((s) => s.name === 'fixture')?.serve).toEqual({
      prompts: '<prompt>',
      resources: '<uri>',
    });
    expect(parsed.tools.find((t) => t.name === 'fixture.test_simple_text')?.serveName).toBe(
      'test_simple_text',
    );
    expect(parsed.tools.find((t) => t.name === 'fixture.read_resource')).not.toHaveProperty('serveName');
  });
});
