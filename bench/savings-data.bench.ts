/**
 * Savings suite, data-heavy tasks (issue 29): each task played in both modes by a scripted model
 * that follows the best strategy of its mode, as in bench/savings.bench.ts, over in-process MCP
 * servers with the filters a direct-calling model would use (bench/data-servers.ts):
 *
 * - log analysis over a million lines: direct mode lists the services and asks for each one's
 *   error lines in parallel (`search_logs({ level: 'error', service })`); code mode takes the
 *   whole log as a file (`export_logs` → a `resource_link`, held as a handle streamed from the
 *   file with `resultHandles.linkRoots`) and groups its errors on the host.
 * - a join across two servers: EU customers (crm) × overdue invoices (billing, paged); direct
 *   mode uses both filters and pages; code mode the same calls with `pages()`.
 * - an aggregation over a paginated API of 100,000 orders: direct mode asks for each month's
 *   completed orders in parallel, page after page; code mode iterates `pages()`.
 *
 * Both modes must reach the expected answer (computed from the data): a wrong answer fails the
 * bench. Per task and mode: tokens in the context (Σ over model requests, o200k_base), model
 * requests, wall time, and the peak memory of the process tree (Σ VmHWM, bench/tree-memory.ts;
 * each play runs in a fresh process, with the servers in it). Reported, not judged: there is
 * no floor for a savings figure. `CODECALL_BENCH_LOG_LINES` (default 1,000,000) sizes the log.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { GenerateRequest, GenerateResponse, ToolMessage } from '../src/providers/language-model.js';
import type { ScriptedStep } from '../src/testing/index.js';
import {
  CUSTOMERS,
  INVOICES,
  MONTHS,
  ORDERS,
  createBillingServer,
  createCrmServer,
  createLogServer,
  createOrdersServer,
  mostErrors,
  overdueByTier,
  revenueByMonth,
  writeLog,
  type Customer,
  type Invoice,
  type Order,
} from './data-servers.js';
import { figure, finish, hasBuild, skip } from './harness.js';
import { treeMemory } from './tree-memory.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const CHILD_FLAG = '--savings-data-child';
const LOG_LINES = Number(process.env.CODECALL_BENCH_LOG_LINES ?? 1_000_000);
const MB = 1_048_576;

type Mode = 'code' | 'direct';
type TaskName = 'logs' | 'join' | 'orders';

interface Task {
  title: string;
  prompt: string;
  /** The search query of code mode and the tools its script calls. */
  query: string;
  needs: string[];
  script: string;
  direct: () => ScriptedStep[];
}

/** The contents of the tool results the last request carries, in call order. */
function results(request: GenerateRequest): string[] {
  const last = request.messages.at(-1) as ToolMessage;
  return last.results.map((r) => r.content);
}

/** One step of parallel direct calls, named by MCP tool (`server__tool`). */
async function calls(
  request: GenerateRequest,
  list: { server: string; tool: string; input: Record<string, unknown> }[],
): Promise<GenerateResponse> {
  const { scriptedResponse } = await import('../src/testing/index.js');
  return scriptedResponse(
    list.map((c, i) => {
      const wanted = `${c.server}__${c.tool}`;
      const found = request.tools.find((t) => t.name === wanted);
      if (!found) throw new Error(`direct mode does not offer ${wanted}`);
      return {
        type: 'tool_call' as const,
        id: `call_${request.messages.length}_${i}`,
        name: found.name,
        input: c.input,
      };
    }),
  );
}

/** What the script printed, from the execute_code result the last request carries. */
function printed(request: GenerateRequest): string {
  const content = results(request).find((c) => c.startsWith('stdout:')) ?? '';
  if (!/\n\nexit status: ok/.test(content)) throw new Error(`the script failed:\n${content}`);
  return content
    .replace(/^stdout:\n/, '')
    .split('\n\nexit status')[0]!
    .trim();
}

const tasks = (): Record<TaskName, Task> => ({
  logs: {
    title: `logs: most errors in ${LOG_LINES.toLocaleString('en-US')} lines`,
    prompt: 'Which service logged the most errors today, and how many?',
    query: 'export the log, search log lines',
    needs: ['tools.logs.export_logs'],
    script: `const log = await tools.logs.export_logs({});
const errors = await log.groupBy('service', { where: { level: 'error' } });
const [service, group] = Object.entries(errors).sort((a, b) => b[1].count - a[1].count || (a[0] < b[0] ? -1 : 1))[0];
console.log(service + ': ' + group.count + ' errors');`,
    direct: () => [
      (request) => calls(request, [{ server: 'logs', tool: 'list_services', input: {} }]),
      (request) => {
        const { services } = JSON.parse(results(request)[0]!) as { services: string[] };
        return calls(
          request,
          services.map((service) => ({
            server: 'logs',
            tool: 'search_logs',
            input: { level: 'error', service, limit: 1_000 },
          })),
        );
      },
      async (request) => {
        const { text } = await import('../src/testing/index.js');
        const counts = new Map<string, number>();
        for (const content of results(request)) {
          const page = JSON.parse(content) as { lines: { service: string }[]; nextCursor?: string };
          if (page.nextCursor !== undefined) throw new Error('a service has more than one page of errors');
          for (const line of page.lines) counts.set(line.service, (counts.get(line.service) ?? 0) + 1);
        }
        return text(mostErrors(counts));
      },
    ],
  },
  join: {
    title: 'join: overdue amount of EU customers per tier (crm × billing)',
    prompt: 'What is the overdue invoice amount of our EU customers, per customer tier?',
    query: 'customers by region, invoices by status',
    needs: ['tools.crm.list_customers', 'tools.billing.list_invoices'],
    script: `const { customers } = await tools.crm.list_customers({ region: 'EU' });
const tierOf = new Map(customers.map((c) => [c.id, c.tier]));
const sums = {};
for await (const page of tools.billing.list_invoices.pages({ status: 'overdue', limit: 1000 }))
  for (const invoice of page.invoices) {
    const tier = tierOf.get(invoice.customerId);
    if (tier !== undefined) sums[tier] = (sums[tier] ?? 0) + invoice.amount;
  }
console.log(['gold', 'silver', 'bronze'].map((tier) => tier + ' $' + (sums[tier] ?? 0)).join('; '));`,
    direct: () => {
      let customers: Customer[] = [];
      const invoices: Invoice[] = [];
      const next = async (
        request: GenerateRequest,
        cursor: string | undefined,
      ): Promise<GenerateResponse> => {
        if (cursor === undefined) {
          const { text } = await import('../src/testing/index.js');
          return text(overdueByTier(customers, invoices));
        }
        return calls(request, [
          { server: 'billing', tool: 'list_invoices', input: { status: 'overdue', limit: 1_000, cursor } },
        ]);
      };
      const readInvoices = (content: string): string | undefined => {
        const page = JSON.parse(content) as { invoices: Invoice[]; nextCursor?: string };
        invoices.push(...page.invoices);
        return page.nextCursor;
      };
      const steps: ScriptedStep[] = [
        (request) =>
          calls(request, [
            { server: 'crm', tool: 'list_customers', input: { region: 'EU' } },
            { server: 'billing', tool: 'list_invoices', input: { status: 'overdue', limit: 1_000 } },
          ]),
        (request) => {
          const [customersText, invoicesText] = results(request);
          customers = (JSON.parse(customersText!) as { customers: Customer[] }).customers;
          return next(request, readInvoices(invoicesText!));
        },
      ];
      const pages = Math.ceil(INVOICES.filter((i) => i.status === 'overdue').length / 1_000);
      for (let p = 1; p < pages; p++)
        steps.push((request) => next(request, readInvoices(results(request)[0]!)));
      return steps;
    },
  },
  orders: {
    title: `orders: completed revenue per month (${ORDERS.length.toLocaleString('en-US')} orders, paged)`,
    prompt: 'What was the revenue of completed orders in each month of 2026?',
    query: 'list orders by status and month',
    needs: ['tools.orders.list_orders'],
    script: `const sums = {};
for await (const page of tools.orders.list_orders.pages({ status: 'completed', limit: 1000 }))
  for (const order of page.orders) sums[order.month] = (sums[order.month] ?? 0) + order.amount;
console.log(${JSON.stringify(MONTHS)}.map((month) => month + ' $' + (sums[month] ?? 0)).join('; '));`,
    direct: () => {
      // Each month's completed orders in parallel, page after page (the chains run side by side).
      const orders: Order[] = [];
      const cursors = new Map<string, string | undefined>(MONTHS.map((month) => [month, undefined]));
      const step = async (request: GenerateRequest, first: boolean): Promise<GenerateResponse> => {
        if (!first) {
          const open = [...cursors.keys()];
          results(request).forEach((content, i) => {
            const page = JSON.parse(content) as { orders: Order[]; nextCursor?: string };
            orders.push(...page.orders);
            if (page.nextCursor === undefined) cursors.delete(open[i]!);
            else cursors.set(open[i]!, page.nextCursor);
          });
        }
        if (cursors.size === 0) {
          const { text } = await import('../src/testing/index.js');
          return text(revenueByMonth(orders));
        }
        return calls(
          request,
          [...cursors].map(([month, cursor]) => ({
            server: 'orders',
            tool: 'list_orders',
            input: { status: 'completed', month, limit: 1_000, ...(cursor !== undefined && { cursor }) },
          })),
        );
      };
      const perMonth = Math.max(
        ...MONTHS.map((m) => ORDERS.filter((o) => o.month === m && o.status === 'completed').length),
      );
      const steps: ScriptedStep[] = [(request) => step(request, true)];
      for (let p = 0; p < Math.ceil(perMonth / 1_000); p++) steps.push((request) => step(request, false));
      return steps;
    },
  },
});

interface Played {
  answer: string;
  tokens: number;
  requests: number;
  ms: number;
  peakBytes: number;
}

async function play(name: TaskName, mode: Mode, logFile: string): Promise<Played> {
  const { createOrchestrator } = await import('../src/agent/index.js');
  const { parseConfig } = await import('../src/config/index.js');
  const { ScriptedLanguageModel, inMemoryTransport, text, toolCall } =
    await import('../src/testing/index.js');
  const task = tasks()[name];
  const steps: ScriptedStep[] =
    mode === 'direct'
      ? task.direct()
      : [
          toolCall('search_tools', { query: task.query }),
          {
            label: 'search found the tools the script calls',
            expect: (request) => {
              const found = results(request)[0] ?? '';
              const missing = task.needs.filter((path) => !found.includes(path));
              if (missing.length > 0) throw new Error(`search did not show ${missing.join(', ')}:\n${found}`);
            },
            response: toolCall('execute_code', { code: task.script }),
          },
          (request) => text(printed(request)),
        ];
  const model = new ScriptedLanguageModel(steps, { modelId: `${mode}-player` });
  const servers = { logs: {}, crm: {}, billing: {}, orders: {} };
  const agent = await createOrchestrator({
    model,
    mode,
    config: parseConfig(
      { mcpServers: Object.fromEntries(Object.keys(servers).map((s) => [s, { command: 'unused' }])) },
      { file: join(ROOT, 'codecall.json'), env: {} },
    ),
    runtimeOptions: {
      history: false,
      resultHandles: { linkRoots: [resolve(logFile, '..')] },
      tools: {
        transports: {
          logs: inMemoryTransport(() => createLogServer(logFile)),
          crm: inMemoryTransport(() => createCrmServer()),
          billing: inMemoryTransport(() => createBillingServer()),
          orders: inMemoryTransport(() => createOrdersServer()),
        },
      },
    },
  });
  try {
    const result = await agent.run(task.prompt);
    model.assertComplete();
    const memory = treeMemory();
    return {
      answer: result.answer,
      tokens: result.savings.contextTokens,
      requests: result.steps.length,
      ms: result.durationMs,
      peakBytes: memory.peakBytes,
    };
  } finally {
    await agent.close();
  }
}

if (process.argv[2] === CHILD_FLAG) {
  const played = await play(process.argv[3] as TaskName, process.argv[4] as Mode, process.argv[5]!);
  process.stdout.write(JSON.stringify(played));
  process.exit(0);
}

function inChild(name: TaskName, mode: Mode, logFile: string): Played {
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, process.argv[1]!, CHILD_FLAG, name, mode, logFile],
    { encoding: 'utf8', maxBuffer: 16 * MB },
  );
  if (child.status !== 0)
    throw new Error(`${name} (${mode}) failed (${child.status}): ${child.stderr.slice(-3_000)}`);
  return JSON.parse(child.stdout) as Played;
}

if (process.platform !== 'linux') {
  skip('peak memory is read from /proc (Linux only)');
} else if (hasBuild(ROOT, ['sandbox/prelude.js', 'isolate/worker.js'])) {
  const work = mkdtempSync(join(tmpdir(), 'codecall-savings-data-'));
  process.on('exit', () => rmSync(work, { recursive: true, force: true }));
  const load = (): string => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  console.log(`  load average at start: ${load()}`);
  const logFile = join(work, 'today.jsonl');
  const expected: Record<TaskName, string> = {
    logs: await writeLog(logFile, LOG_LINES),
    join: overdueByTier(CUSTOMERS, INVOICES),
    orders: revenueByMonth(ORDERS),
  };
  const all = tasks();
  const header = ['task', 'tokens code / direct', 'ratio', 'requests c/d', 'wall s c/d', 'peak MB c/d'];
  const rows: string[][] = [];
  let wrong = 0;
  const n = (value: number): string => Math.round(value).toLocaleString('en-US');
  for (const name of ['logs', 'join', 'orders'] as const) {
    const code = inChild(name, 'code', logFile);
    const direct = inChild(name, 'direct', logFile);
    for (const [mode, played] of [
      ['code', code],
      ['direct', direct],
    ] as const)
      if (played.answer !== expected[name]) {
        wrong++;
        console.log(
          `  WRONG ANSWER (${mode}) on "${all[name].title}":\n    got      ${played.answer}\n    expected ${expected[name]}`,
        );
      }
    rows.push([
      all[name].title,
      `${n(code.tokens)} / ${n(direct.tokens)}`,
      (code.tokens / direct.tokens).toFixed(4),
      `${code.requests} / ${direct.requests}`,
      `${(code.ms / 1_000).toFixed(1)} / ${(direct.ms / 1_000).toFixed(1)}`,
      `${n(code.peakBytes / MB)} / ${n(direct.peakBytes / MB)}`,
    ]);
    figure(`${name}: code / direct tokens in context`, code.tokens / direct.tokens, '×');
  }
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]): string =>
    '  ' + cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  console.log(`  load average at end: ${load()}`);
  if (wrong > 0) {
    console.log(`  ${wrong} wrong answer(s): the suite is only valid when both modes answer right`);
    process.exitCode = 1;
  } else console.log('  every task: both modes gave the expected answer');
}
finish();
