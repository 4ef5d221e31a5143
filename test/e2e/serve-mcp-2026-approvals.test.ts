/**
 * Approvals for MCP 2026-07-28 clients through `input_required` (no held stream): the official SDK
 * v2 client answers the elicitation form and retries; codecall resumes the paused run by replay of
 * its journal, so the calls made before the approval are not made again (a probe MCP server counts
 * every call it really ran). Then two `codecall serve` nodes behind a round-robin proxy, sharing a
 * signing key and a Redis journal: the round that pauses and the retry that resumes reach
 * different nodes.
 */
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import type { ServeProcess } from './serve-helpers.js';
import { connect2026, resultText, roundRobin, startServe2026 } from './mcp-2026-helpers.js';
import {
  hasRedisServer,
  probeConfig,
  startProbeServer,
  startRedis,
  type ProbeServer,
  type RedisHandle,
} from '../integration/jobs/jobs-helpers.js';

const serves: ServeProcess[] = [];
const proxies: Server[] = [];
let probe: ProbeServer | undefined;
let redis: RedisHandle | undefined;
afterAll(async () => {
  for (const proxy of proxies) proxy.close();
  for (const serve of serves) serve.child.kill('SIGTERM');
  await Promise.all(serves.map((serve) => serve.exited));
  await probe?.close();
  await redis?.stop();
});

/** Sleeps (not gated) with key "before", then records (gated) `key`; prints what happened. */
const script = (key: string): string =>
  `await tools.probe.sleep({ ms: 0, key: 'before-${key}' });
   try { console.log(JSON.stringify(await tools.probe.record({ key: '${key}' }))); }
   catch (error) { console.log(error.code); }`;

const text = resultText;

function startServe(configPath: string, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  return startServe2026(serves, configPath, args, env);
}

/** A 2026-pinned SDK v2 client whose elicitation handler answers `approve` and logs each form. */
function connect(url: string, approve: boolean, asked: string[]): Promise<Client> {
  return connect2026(url, { name: 'e2e-2026-approvals', approve, asked });
}

describe('approvals for 2026-07-28 clients through input_required', () => {
  it('pauses the run, asks through input_required, resumes it by replay: approved runs once, denied never', async () => {
    probe = await startProbeServer();
    const config = probeConfig(probe.url, {
      mcpServers: { probe: { type: 'http', url: probe.url, tools: { record: { requireApproval: true } } } },
    });
    const { url } = await startServe(config.path);

    const asked: string[] = [];
    const yes = await connect(url, true, asked);
    const approved = await yes.callTool({ name: 'execute_code', arguments: { code: script('gated') } });
    expect(text(approved)).toMatch(/^stdout:\n\{"key":"gated","count":1\}\n/);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/probe\.record/);
    // The call before the approval ran once: the retry answered it from the journal.
    expect(probe.counts.sleeps.get('before-gated')).toBe(1);
    expect(probe.counts.records.get('gated')).toBe(1);
    await yes.close();

    const no = await connect(url, false, asked);
    const denied = await no.callTool({ name: 'execute_code', arguments: { code: script('denied') } });
    expect(text(denied)).toMatch(/^stdout:\nAPPROVAL_DENIED\n/);
    expect(asked).toHaveLength(2);
    expect(probe.counts.records.get('denied')).toBeUndefined();
    expect(probe.counts.sleeps.get('before-denied')).toBe(1);

    // A forged requestState (and one past the size bound) is refused before anything runs.
    const forged: string[] = [];
    for (const requestState of ['v1.forged.mac', 'x'.repeat(5_000)]) {
      const answer = await no
        .request({
          method: 'tools/call',
          params: {
            name: 'execute_code',
            arguments: { code: script('forged') },
            requestState,
            inputResponses: { approval: { action: 'accept', content: { approve: true } } },
          },
        })
        .then(
          () => 'answered',
          (error: { code?: unknown; message?: unknown }) => `${String(error.code)} ${String(error.message)}`,
        );
      forged.push(answer);
    }
    expect(forged).toEqual([
      '-32602 Invalid or expired requestState',
      '-32602 Invalid or expired requestState',
    ]);
    expect(probe.counts.sleeps.get('before-forged')).toBeUndefined();
    await no.close();
  }, 180_000);

  it.skipIf(!hasRedisServer() && process.env.CI !== 'true')(
    'two nodes behind a round-robin proxy: one pauses the run, the other resumes it (shared key, Redis journal)',
    async () => {
      probe ??= await startProbeServer();
      redis = await startRedis();
      const config = probeConfig(probe.url, {
        mcpServers: { probe: { type: 'http', url: probe.url, tools: { record: { requireApproval: true } } } },
      });
      const env = { CODECALL_REQUEST_STATE_KEY: randomBytes(32).toString('hex') };
      const [a, b] = await Promise.all([
        startServe(config.path, ['--redis', redis.url], env),
        startServe(config.path, ['--redis', redis.url], env),
      ]);
      const proxy = await roundRobin([a.url, b.url]);
      proxies.push(proxy.server);
      const asked: string[] = [];
      const client = await connect(proxy.url, true, asked);
      const before = [...proxy.hits];
      const result = await client.callTool({ name: 'execute_code', arguments: { code: script('fleet') } });
      expect(text(result)).toMatch(/^stdout:\n\{"key":"fleet","count":1\}\n/);
      expect(asked).toHaveLength(1);
      // Two requests (the round that paused, the retry that resumed), one on each node.
      expect(proxy.hits.map((n, i) => n - before[i]!)).toEqual([1, 1]);
      expect(probe.counts.sleeps.get('before-fleet')).toBe(1);
      expect(probe.counts.records.get('fleet')).toBe(1);
      await client.close();
    },
    240_000,
  );
});
