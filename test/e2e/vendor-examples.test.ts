/**
 * @module
 * The vendor-endpoint examples (examples/vendor-endpoints) run as their headers say, against a
 * real `codecall serve --http` over examples/codecall.json with the offline `demo` model, in both
 * dialects, streaming and not: the client owns the expense tools, deferred behind a tool search
 * (Anthropic BM25 and regex; OpenAI executed by the server and by the client), the script calls
 * them from code (each call a round trip to the client), and the answer matches the data computed here.
 */
import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createExpenseData, overBudgetMembers } from '../../src/testing/servers/index.js';
import { spawnServe, type ServeProcess } from './serve-helpers.js';
import { tempRoot } from './temp-root.js';

const run = promisify(execFile);
// Run from a temp copy of the root: the usage history serve writes next to the config stays out of the work tree.
const temp = tempRoot();
const ROOT = temp.root;
const ENV = { ...process.env, PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}` };
let serve: ServeProcess;
let url: string;

beforeAll(async () => {
  serve = spawnServe(['--http', '--port', '0', '--config', 'examples/codecall.json'], { cwd: ROOT });
  const [, found] = (await serve.waitFor(/listening on (http:\/\/\S+)\/mcp/)) as [string, string];
  url = found;
}, 120_000);

afterAll(async () => {
  serve?.child.kill('SIGTERM');
  await serve?.exited;
  temp[Symbol.dispose]();
});

const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');

describe('examples/vendor-endpoints', () => {
  for (const [file, flags] of [
    ['team-expenses-anthropic.mjs', []],
    ['team-expenses-anthropic.mjs', ['--stream', '--regex']],
    ['team-expenses-openai.mjs', []],
    ['team-expenses-openai.mjs', ['--stream', '--client-search']],
  ] as const) {
    it(`${file} ${flags.join(' ')}: a tool search loads the client's tools, called from code they answer the budget question`, async () => {
      const { stdout, stderr } = await run(
        process.execPath,
        [`examples/vendor-endpoints/${file}`, ...flags],
        {
          cwd: ROOT,
          env: { ...ENV, CODECALL_URL: url },
        },
      );
      const lines = stdout.trim().split('\n');
      expect(lines).toContain(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
      expect(lines.filter((l) => l.startsWith('- ')).map((l) => l.slice(2, l.indexOf(' (')))).toEqual(
        [...expected].sort((a, b) => b.spent - b.budget - (a.spent - a.budget)).map((e) => e.member.name),
      );
      // The deferred tools were loaded by a tool search (served by codecall, or by the client with --client-search).
      expect(stderr).toContain('(tool search loaded: get_budget_by_level, get_expenses, get_team_members');
      if (file.includes('openai'))
        expect(stderr).toContain(
          (flags as readonly string[]).includes('--client-search')
            ? '; 1 searched here)'
            : '; 0 searched here)',
        );
      // Members, budgets (one Promise.all), then the expense pages: several client round trips.
      expect(Number(/\((\d+) client round trips/.exec(stderr)?.[1])).toBeGreaterThanOrEqual(3);
    }, 180_000);
  }
});
