/**
 * A script's upstream input requests reach the 2026-07-28 client that started the run (issue 28):
 * `codecall serve --http` runs `execute_code` for the official SDK v2 client pinned to 2026-07-28;
 * the script calls a real SDK v2 upstream that answers `input_required` (one round, two rounds,
 * and a question that changes on replay) and a real SDK 1.x upstream that elicits during its call.
 * Each request pauses the run and reaches the client as `input_required`; the client's retry is
 * resumed by replay of the run's journal, the upstream asked again and answered from the client's
 * responses. The upstreams count what really ran. Then two serve nodes behind a round-robin proxy
 * (shared key, Redis journals): the rounds land on both nodes.
 */
import { randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { hasRedisServer, startRedis, type RedisHandle } from '../integration/jobs/jobs-helpers.js';
import { resultText, roundRobin, startServe2026 } from './mcp-2026-helpers.js';
import type { ServeProcess } from './serve-helpers.js';
import { startInputUpstreams, writeInputConfig, type InputUpstreams } from './upstream-input-fixtures.js';

const serves: ServeProcess[] = [];
const closers: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const serve of serves) serve.child.kill('SIGTERM');
  await Promise.all(serves.map((serve) => serve.exited));
  for (const close of closers.reverse()) await close();
});

function writeConfig(upstreams: InputUpstreams, extra: Record<string, unknown> = {}): string {
  return writeInputConfig(upstreams, closers, extra);
}

/**
 * The SDK v2 client pinned to 2026-07-28; its elicitation handler answers each form from
 * `answer` (by message) and logs every message to `asked`. Without `elicitation`, it declares none.
 */
async function connect(
  url: string,
  asked: string[],
  options: { elicitation?: boolean } = {},
): Promise<Client> {
  const client = new Client(
    { name: 'e2e-2026-upstream-input', version: '1.0.0' },
    {
      capabilities: options.elicitation === false ? {} : { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
      inputRequired: { maxRounds: 20 },
    },
  );
  if (options.elicitation !== false)
    client.setRequestHandler('elicitation/create', (request) => {
      const message = request.params.message;
      asked.push(message);
      if (message.startsWith('Approve ')) return { action: 'accept', content: { approve: true } };
      if (message === 'Which name?') return { action: 'accept', content: { name: 'orion' } };
      if (message.endsWith('question?')) return { action: 'accept', content: { answer: `re: ${message}` } };
      if (message.startsWith('Wipe t2')) return { action: 'decline' };
      return { action: 'accept', content: { confirm: true } };
    });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  closers.push(() => client.close());
  return client;
}

/** Deploys (approval, then a 2026 input round), wipes two tables (2025 elicitation: yes, then declined). */
const script = `
  const deployed = await tools.modern.deploy({ env: 'staging' });
  const wiped = await tools.legacy.wipe({ table: 't1' });
  const kept = await tools.legacy.wipe({ table: 't2' });
  console.log(JSON.stringify([deployed, wiped, kept]));`;

describe('a script’s upstream input requests reach the 2026-07-28 client that started the run', () => {
  it('passes 2026 input_required rounds and 2025 elicitations to the client, beside an approval, answered by replay', async () => {
    const upstreams = await startInputUpstreams(closers);
    const { url } = await startServe2026(serves, writeConfig(upstreams));
    const asked: string[] = [];
    const client = await connect(url, asked);

    const result = await client.callTool({ name: 'execute_code', arguments: { code: script } });
    expect(resultText(result)).toMatch(/^stdout:\n\["deployed staging","wiped t1","kept t2"\]\n/);
    expect(asked.map((message) => message.replace(/^(Approve \S+).*$/s, '$1'))).toEqual([
      'Approve modern.deploy({"env":"staging"})',
      'Deploy to staging?',
      'Wipe t1?',
      'Wipe t2?',
    ]);
    // Each effect happened once, though the run was replayed after every round.
    expect(upstreams.done).toEqual(['deploy:staging', 'wipe:t1']);

    // Two rounds in one upstream call, and a question that changes on replay: the answer given is
    // the one to the question the upstream asks now, never the earlier one's.
    asked.length = 0;
    const multi = await client.callTool({
      name: 'execute_code',
      arguments: {
        code: 'console.log(await tools.modern.two_step({})); console.log(await tools.modern.fickle({}));',
      },
    });
    expect(resultText(multi)).toMatch(/^stdout:\nnamed orion\nSecond question\? re: Second question\?\n/);
    expect(asked).toEqual(['Which name?', 'Really name it orion?', 'First question?', 'Second question?']);
    expect(upstreams.done.slice(2)).toEqual(['name:orion', 'fickle:Second question?=re: Second question?']);
  }, 180_000);

  it('gives a client without the elicitation capability a tool error naming it, and nothing hangs', async () => {
    const upstreams = await startInputUpstreams(closers);
    const { url } = await startServe2026(serves, writeConfig(upstreams));
    const client = await connect(url, [], { elicitation: false });
    const result = await client.callTool({
      name: 'execute_code',
      arguments: {
        code: `try { await tools.legacy.wipe({ table: 't9' }); } catch (error) { console.log('wipe:', error.message); }
               try { await tools.modern.two_step({}); } catch (error) { console.log('two_step:', error.message); }`,
      },
    });
    const text = resultText(result);
    expect(text).toMatch(/wipe: .*did not declare the "elicitation" capability/);
    expect(text).toMatch(/two_step: .*did not declare the "elicitation" capability/);
    expect(upstreams.done).toEqual([]);
  }, 120_000);

  it.skipIf(!hasRedisServer() && process.env.CI !== 'true')(
    'two nodes behind a round-robin proxy: the rounds of one run land on both (shared key, Redis journals)',
    async () => {
      const upstreams = await startInputUpstreams(closers);
      const redis: RedisHandle = await startRedis();
      closers.push(() => redis.stop());
      const config = writeConfig(upstreams);
      const env = { CODECALL_REQUEST_STATE_KEY: randomBytes(32).toString('hex') };
      const [a, b] = await Promise.all([
        startServe2026(serves, config, ['--redis', redis.url], env),
        startServe2026(serves, config, ['--redis', redis.url], env),
      ]);
      const proxy = await roundRobin([a.url, b.url]);
      closers.push(() => void proxy.server.close());
      const asked: string[] = [];
      const client = await connect(proxy.url, asked);
      const before = [...proxy.hits];
      const result = await client.callTool({ name: 'execute_code', arguments: { code: script } });
      expect(resultText(result)).toMatch(/^stdout:\n\["deployed staging","wiped t1","kept t2"\]\n/);
      expect(asked).toHaveLength(4);
      // Five requests (four rounds and the last retry), alternating between the nodes.
      expect(proxy.hits.map((n, i) => n - before[i]!).sort()).toEqual([2, 3]);
      expect(upstreams.done).toEqual(['deploy:staging', 'wipe:t1']);
    },
    240_000,
  );
});
