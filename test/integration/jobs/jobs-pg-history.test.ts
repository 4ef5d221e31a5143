/**
 * Usage history shared by a fleet in PostgreSQL: several stores' runs add up to one tool graph,
 * one transaction per run (a statement that fails inside it, or a connection killed mid-write,
 * leaves nothing of that run), query feedback round-trips, and Postgres workers (library and
 * `codecall worker --postgres --shared-history`) feed one graph. Against a real PostgreSQL 15.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgJobClient, startPgWorker } from '../../../src/jobs/index.js';
import { PostgresHistoryStore } from '../../../src/store/postgres-history-store.js';
import { probeConfig, spawnWorker, startProbeServer, type ProbeServer } from './jobs-helpers.js';
import { postgresBinDir, startPostgres, type PostgresHandle } from './postgres-helpers.js';
import { loadState } from '../../contract/load-state.js';

const missing = postgresBinDir() === undefined;

describe.skipIf(missing)(
  `usage history in PostgreSQL (real PostgreSQL 15)${missing ? ' (SKIP: initdb/pg_ctl not found; apt-get install postgresql-15)' : ''}`,
  () => {
    let server: PostgresHandle;
    let admin: pg.Client;

    beforeAll(async () => {
      server = await startPostgres();
      admin = new pg.Client({ connectionString: server.url });
      await admin.connect();
    }, 120_000);

    afterAll(async () => {
      await admin?.end();
      await server?.stop();
    });

    it('adds up the runs of several stores into one graph per namespace', async () => {
      const [a, b] = await Promise.all([
        PostgresHistoryStore.open({ connection: server.url, namespace: 'unit' }),
        PostgresHistoryStore.open({ connection: server.url, namespace: 'unit' }),
      ]);
      await a.appendSequence(['s.get_team_members', 's.get_expenses', 's.get_expenses', 's.get_budget']);
      await b.appendSequence(['s.get_team_members', 's.get_expenses']);
      await b.appendSequence([]);
      await a.close();
      await b.close();
      const reader = await PostgresHistoryStore.open({ connection: server.url, namespace: 'unit' });
      const state = await loadState(reader);
      expect(state.sequences).toBe(3);
      expect(state.transitions).toEqual([
        ['s.get_team_members', 's.get_expenses', 2],
        ['s.get_expenses', 's.get_budget', 1],
      ]);
      expect(state.usages).toBeUndefined();
      const other = await PostgresHistoryStore.open({ connection: server.url, namespace: 'other' });
      expect(await loadState(other)).toEqual({ version: 1, sequences: 0, transitions: [] });
      const { rows } = await admin.query<{ table_name: string }>(
        "SELECT table_name FROM information_schema.tables WHERE table_schema = 'codecall' ORDER BY 1",
      );
      expect(rows.map((r) => r.table_name)).toEqual([
        'history_approvals',
        'history_result_shapes',
        'history_runs',
        'history_transitions',
        'history_usages',
        'store_values',
      ]);
      await expect(reader.appendSequence('not a list' as never)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
      await reader.close();
      await other.close();
      await expect(loadState(reader)).rejects.toMatchObject({ code: 'CLOSED' });
      await expect(
        PostgresHistoryStore.open({ connection: server.url, namespace: 'bad name; drop' }),
      ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    });

    it('loads at most maxTransitions pairs, the most used first', async () => {
      const writer = await PostgresHistoryStore.open({ connection: server.url, namespace: 'bounded' });
      await writer.appendSequence(['x.a', 'x.b']);
      await writer.appendSequence(['x.c', 'x.d', 'x.a', 'x.b']);
      await writer.close();
      const reader = await PostgresHistoryStore.open({
        connection: server.url,
        namespace: 'bounded',
        maxTransitions: 1,
      });
      expect((await loadState(reader)).transitions).toEqual([['x.a', 'x.b', 2]]);
      await reader.close();
    });

    it('records a run whose tool names PostgreSQL text cannot hold (NUL), without those names', async () => {
      const store = await PostgresHistoryStore.open({ connection: server.url, namespace: 'nul' });
      await store.appendSequence(['n.a', 'n.b', 'n.\u0000bad', 'n.c']);
      await store.appendUsage({ query: 'q\u0000', tools: ['n.a'] });
      expect(await loadState(store)).toEqual({ version: 1, sequences: 1, transitions: [['n.a', 'n.b', 1]] });
      await store.close();
    });

    it('writes a run atomically: a failing statement or a killed connection leaves nothing of it', async () => {
      const store = await PostgresHistoryStore.open({ connection: server.url, namespace: 'atomic' });
      await store.appendSequence(['t.a', 't.b']);
      const before = await loadState(store);
      expect(before).toEqual({ version: 1, sequences: 1, transitions: [['t.a', 't.b', 1]] });
      // Real faults inside the run's transaction, after its run counter was bumped.
      await admin.query(`
        CREATE FUNCTION public.history_fault() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.to_tool = 't.boom' THEN RAISE EXCEPTION 'injected fault'; END IF;
          IF NEW.to_tool = 't.slow' THEN PERFORM pg_sleep(60); END IF;
          RETURN NEW;
        END $$;
        CREATE TRIGGER history_fault BEFORE INSERT OR UPDATE ON codecall.history_transitions
          FOR EACH ROW EXECUTE FUNCTION public.history_fault();`);
      try {
        await expect(store.appendSequence(['t.a', 't.b', 't.boom'])).rejects.toMatchObject({
          code: 'HISTORY_STORE_FAILED',
          message: expect.stringContaining('injected fault') as unknown,
        });
        expect(await loadState(store)).toEqual(before);

        const writing = store.appendSequence(['t.a', 't.b', 't.slow']);
        writing.catch(() => {}); // observed below
        // Wait until the write is inside the transaction (sleeping in the trigger), then kill it.
        let pid: number | undefined;
        while (pid === undefined) {
          const { rows } = await admin.query<{ pid: number }>(
            "SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%history_transitions%'",
          );
          pid = rows[0]?.pid;
          if (pid === undefined) await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await admin.query('SELECT pg_terminate_backend($1)', [pid]);
        await expect(writing).rejects.toMatchObject({ code: 'HISTORY_STORE_FAILED' });
        expect(await loadState(store)).toEqual(before);
        // The pool replaced the killed connection: the next run is recorded.
        await store.appendSequence(['t.a', 't.b']);
        expect((await loadState(store)).sequences).toBe(2);
      } finally {
        await admin.query('DROP TRIGGER history_fault ON codecall.history_transitions');
        await admin.query('DROP FUNCTION public.history_fault()');
        await store.close();
      }
    });

    it('round-trips query feedback, newest maxUsages per namespace, oldest first', async () => {
      const a = await PostgresHistoryStore.open({ connection: server.url, namespace: 'fb', maxUsages: 2 });
      const b = await PostgresHistoryStore.open({ connection: server.url, namespace: 'fb-other' });
      await a.appendUsage({ query: 'first', tools: ['s.one'] });
      await b.appendUsage({ query: 'elsewhere', tools: [] });
      await a.appendUsage({ query: 'team expenses', tools: ['s.get_team_members', 's.get_expenses'] });
      await a.appendUsage({ query: 'budget', tools: ['s.get_budget'] });
      await expect(a.appendUsage({ query: 1 } as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
      expect((await loadState(a)).usages).toEqual([
        ['team expenses', ['s.get_team_members', 's.get_expenses']],
        ['budget', ['s.get_budget']],
      ]);
      expect((await loadState(b)).usages).toEqual([['elsewhere', []]]);
      const { rows } = await admin.query<{ n: string }>(
        "SELECT count(*) AS n FROM codecall.history_usages WHERE namespace = 'fb'",
      );
      expect(Number(rows[0]!.n)).toBe(2);
      await a.close();
      await b.close();
    });

    describe('workers with shared history', () => {
      let probe: ProbeServer;

      beforeAll(async () => {
        probe = await startProbeServer();
      });

      afterAll(async () => {
        await probe?.close();
      });

      it('feeds one graph from a library worker and `codecall worker --postgres --shared-history`', async () => {
        const queue = 'pg-history';
        const config = probeConfig(probe.url).path;
        const started: string[] = [];
        const lib = await startPgWorker({
          connection: server.url,
          queue,
          name: 'lib',
          concurrency: 1,
          sharedHistory: true,
          runtimes: { configs: { default: config } },
          onLog: (line) => {
            if (line.endsWith('started')) started.push(line);
          },
        });
        const cli = await spawnWorker([
          '--postgres',
          server.url,
          '--queue',
          queue,
          '--concurrency',
          '1',
          '--shared-history',
          '--config',
          config,
        ]);
        const client = await createPgJobClient({ connection: server.url, queue });
        try {
          const code = 'await tools.probe.record({ key: "pgh" }); await tools.probe.sleep({ ms: 400 });';
          const ids = await Promise.all(
            Array.from({ length: 8 }, () => client.submit({ kind: 'exec', code })),
          );
          const records = await Promise.all(ids.map(({ id }) => client.wait(id, { timeoutMs: 60_000 })));
          expect(records.map((r) => r.result?.status)).toEqual(Array.from({ length: 8 }, () => 'ok'));
          const cliStarted = cli.stderr().match(/attempt 1 started/g)?.length ?? 0;
          expect(started.length).toBeGreaterThan(0);
          expect(cliStarted).toBeGreaterThan(0);
          expect(started.length + cliStarted).toBe(8);
        } finally {
          await client.close();
          cli.child.kill('SIGTERM');
          await cli.exited;
          await lib.close();
        }
        const reader = await PostgresHistoryStore.open({
          connection: server.url,
          namespace: `${queue}.default`,
        });
        const state = await loadState(reader);
        await reader.close();
        expect(state.sequences).toBe(8);
        expect(state.transitions).toEqual([['probe.record', 'probe.sleep', 8]]);
      }, 120_000);
    });
  },
);
