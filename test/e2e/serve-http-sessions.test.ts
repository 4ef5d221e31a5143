/**
 * @module
 * `codecall serve --http` (the real binary, process-mode sandbox) with two SDK clients: each
 * client's `execute_code` session keeps its own state, and the same session name in the other
 * client starts empty.
 */
import { rmSync } from 'node:fs';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';

import { spawnServe, tempServeConfig } from './serve-helpers.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function run(client: Client, code: string, session: string): Promise<string> {
  const result = (await client.callTool({
    name: 'execute_code',
    arguments: { code, session },
  })) as CallToolResult;
  return result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

describe('codecall serve --http sessions', () => {
  it('two clients using the same session name never see each other’s state', async () => {
    const temp = tempServeConfig();
    dirs.push(temp.dir);
    const serve = spawnServe(['--http', '--port', '0', '--config', temp.configPath]);
    try {
      const [, url] = (await serve.waitFor(/listening on (http:\/\/\S+)/)) as [string, string];
      const first = new Client({ name: 'e2e-session-a', version: '1.0.0' });
      const second = new Client({ name: 'e2e-session-b', version: '1.0.0' });
      await first.connect(new StreamableHTTPClientTransport(new URL(url)));
      await second.connect(new StreamableHTTPClientTransport(new URL(url)));

      expect(
        await run(
          first,
          'const { members } = await tools.expenses.get_team_members({}); const who = "first"; console.log(members.length);',
          'shared-name',
        ),
      ).toContain('stdout:\n20');
      expect(await run(first, 'console.log(who, members.length);', 'shared-name')).toContain(
        'stdout:\nfirst 20',
      );
      expect(await run(second, 'console.log(typeof who, typeof members);', 'shared-name')).toContain(
        'stdout:\nundefined undefined',
      );
      await run(second, 'const who = "second";', 'shared-name');
      expect(await run(first, 'console.log(who);', 'shared-name')).toContain('stdout:\nfirst');
      expect(await run(second, 'console.log(who);', 'shared-name')).toContain('stdout:\nsecond');
      await first.close();
      await second.close();
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
  });
});
