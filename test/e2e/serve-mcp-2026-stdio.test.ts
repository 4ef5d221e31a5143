/**
 * `codecall serve` over stdio to the official SDK v2 client (`@modelcontextprotocol/client`,
 * unmodified, its `StdioClientTransport` spawning the real bin) in its three negotiation modes:
 * `auto` and `{ pin: '2026-07-28' }` land on the 2026-07-28 era (served by the SDK v2 `serveStdio`
 * entry), `legacy` on 2025-11-25 (the SDK 1.x server as before).
 */
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, tempServeConfig } from './serve-helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

type Mode = NonNullable<
  NonNullable<NonNullable<ConstructorParameters<typeof Client>[1]>['versionNegotiation']>['mode']
>;

function text(result: unknown): string {
  return ((result as { content: { type: string; text?: string }[] }).content ?? [])
    .map((c) => (c.type === 'text' ? (c.text ?? '') : ''))
    .join('\n');
}

describe('codecall serve (stdio) to 2026-07-28 and 2025-11-25 clients', () => {
  it('serves the SDK v2 client in auto, pinned-2026 and legacy modes', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const cases: [Mode, 'modern' | 'legacy', string][] = [
      ['auto', 'modern', '2026-07-28'],
      [{ pin: '2026-07-28' }, 'modern', '2026-07-28'],
      ['legacy', 'legacy', '2025-11-25'],
    ];
    const seen: string[] = [];
    for (const [mode, era, version] of cases) {
      const client = new Client(
        { name: 'e2e-2026-stdio', version: '1.0.0' },
        { versionNegotiation: { mode } },
      );
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [BIN, 'serve', '--config', temp.configPath],
          cwd: temp.workDir,
          stderr: 'pipe',
        }),
      );
      try {
        expect(client.getProtocolEra()).toBe(era);
        expect(client.getNegotiatedProtocolVersion()).toBe(version);
        const { tools } = await client.listTools();
        expect(tools.slice(0, 2).map((t) => t.name)).toEqual(['search_tools', 'execute_code']);
        const found = await client.callTool({
          name: 'search_tools',
          arguments: { query: 'team members expenses' },
        });
        expect(text(found)).toMatch(/get_team_members/);
        const ran = await client.callTool({
          name: 'execute_code',
          arguments: {
            code: 'const { members } = await tools.expenses.get_team_members(); console.log(members.length > 0 ? "members" : "none")',
          },
        });
        expect(text(ran)).toBe('stdout:\nmembers\n\nexit status: ok after 1 tool call');
        seen.push(`${client.getProtocolEra()}`);
      } finally {
        await client.close();
      }
    }
    expect(seen).toEqual(['modern', 'modern', 'legacy']);
  }, 240_000);
});
