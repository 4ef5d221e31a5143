/**
 * @module
 * The MCP servers of the data-heavy savings tasks (bench/savings-data.bench.ts), in process,
 * with deterministic data and the filters a direct-calling model would use:
 * - `logs`: a day's log of a million JSON lines. `export_logs` returns the whole log as a
 *   `resource_link` to its file (the only way a result this large leaves a server);
 *   `list_services` and `search_logs({ level, service, cursor, limit })` page through lines.
 * - `crm`: `list_customers({ region })`; `billing`: `list_invoices({ status, cursor, limit })`
 *   (a join across two servers).
 * - `orders`: `list_orders({ status, month, cursor, limit })` over 100,000 orders.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

/** The most rows one page returns. */
export const PAGE_LIMIT = 1_000;
export const SERVICES = Array.from({ length: 20 }, (_, i) => `svc-${String(i).padStart(2, '0')}`);
export const REGIONS = ['EU', 'US', 'APAC'] as const;
export const TIERS = ['gold', 'silver', 'bronze'] as const;
export const MONTHS = Array.from({ length: 12 }, (_, i) => `2026-${String(i + 1).padStart(2, '0')}`);

const json = (value: unknown) => ({ content: [{ type: 'text' as const, text: JSON.stringify(value) }] });
const cursorOf = (cursor: string | undefined): number => (cursor === undefined ? 0 : Number(cursor) || 0);

/** One page of `rows` from `cursor`, with `nextCursor` when more remain. */
function page<T>(rows: T[], key: string, cursor: string | undefined, limit: number | undefined) {
  const start = cursorOf(cursor);
  const end = Math.min(rows.length, start + Math.min(limit ?? 100, PAGE_LIMIT));
  return json({ [key]: rows.slice(start, end), ...(end < rows.length && { nextCursor: String(end) }) });
}

// ---------------------------------------------------------------------------------------------
// logs

interface LogRow {
  ts: number;
  level: 'info' | 'warn' | 'error';
  service: string;
  ms: number;
  path: string;
}

function logRow(i: number): LogRow {
  const service = SERVICES[(i * 7) % SERVICES.length]!;
  const error = i % 97 === 0 || (service === 'svc-07' && i % 1_009 === 0);
  return {
    ts: 1_780_000_000 + i,
    level: error ? 'error' : i % 13 === 0 ? 'warn' : 'info',
    service,
    ms: (i * 31) % 2_000,
    path: `/v1/${['orders', 'items', 'users', 'search'][i % 4]}/${i % 5_000}`,
  };
}

/** Writes the log; returns the expected answer (the service with the most errors and its count). */
export async function writeLog(file: string, lines: number): Promise<string> {
  const out = createWriteStream(file);
  const errors = new Map<string, number>();
  for (let i = 0; i < lines; i += 10_000) {
    let chunk = '';
    for (let k = i; k < Math.min(lines, i + 10_000); k++) {
      const row = logRow(k);
      if (row.level === 'error') errors.set(row.service, (errors.get(row.service) ?? 0) + 1);
      chunk += `${JSON.stringify(row)}\n`;
    }
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return mostErrors(errors);
}

/** `svc-07: 812 errors` — the most errors, ties by name. */
export function mostErrors(errors: Map<string, number> | Record<string, number>): string {
  const entries = errors instanceof Map ? [...errors] : Object.entries(errors);
  const [service, count] = entries.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;
  return `${service}: ${count} errors`;
}

export function createLogServer(file: string): McpServer {
  const server = new McpServer({ name: 'logs', version: '1.0.0' });
  // The server's index: the rows of one level, read from the file the first time it is asked.
  const byLevel = new Map<string, Promise<LogRow[]>>();
  const rowsOf = (level: string | undefined): Promise<LogRow[]> => {
    const key = level ?? '*';
    let rows = byLevel.get(key);
    if (rows === undefined) {
      rows = (async () => {
        const out: LogRow[] = [];
        for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
          if (line === '') continue;
          const row = JSON.parse(line) as LogRow;
          if (level === undefined || row.level === level) out.push(row);
        }
        return out;
      })();
      byLevel.set(key, rows);
    }
    return rows;
  };
  server.registerTool(
    'export_logs',
    {
      description:
        "Today's whole log as one JSON-lines file (a resource_link): each line { ts, level, service, ms, path }. About a million lines.",
      inputSchema: {},
      annotations: { readOnlyHint: true },
    },
    () => ({
      content: [
        {
          type: 'resource_link',
          uri: pathToFileURL(file).href,
          name: 'today.jsonl',
          mimeType: 'application/x-ndjson',
        },
      ],
    }),
  );
  server.registerTool(
    'list_services',
    { description: 'The names of the services that write to the log.', inputSchema: {} },
    () => json({ services: SERVICES }),
  );
  server.registerTool(
    'search_logs',
    {
      description: `Log lines of today, filtered by level and service, ${PAGE_LIMIT} at most per page; pass nextCursor back as cursor for the next page.`,
      inputSchema: {
        level: z.enum(['info', 'warn', 'error']).optional(),
        service: z.string().optional(),
        cursor: z.string().optional(),
        limit: z.number().int().min(1).max(PAGE_LIMIT).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    async ({ level, service, cursor, limit }) =>
      page(
        (await rowsOf(level)).filter((r) => service === undefined || r.service === service),
        'lines',
        cursor,
        limit,
      ),
  );
  return server;
}

// ---------------------------------------------------------------------------------------------
// crm + billing

export interface Customer {
  id: string;
  name: string;
  region: (typeof REGIONS)[number];
  tier: (typeof TIERS)[number];
}
export interface Invoice {
  id: string;
  customerId: string;
  status: 'paid' | 'open' | 'overdue';
  amount: number;
}

export const CUSTOMERS: Customer[] = Array.from({ length: 3_000 }, (_, i) => ({
  id: `c${i}`,
  name: `Customer ${i}`,
  region: REGIONS[i % 3]!,
  tier: TIERS[(i * 7 + (i >> 4)) % 3]!,
}));
export const INVOICES: Invoice[] = Array.from({ length: 40_000 }, (_, i) => ({
  id: `inv${i}`,
  customerId: `c${(i * 13) % 3_000}`,
  status: i % 9 === 0 ? 'overdue' : i % 4 === 0 ? 'open' : 'paid',
  amount: ((i * 37) % 5_000) + 5,
}));

/** `gold $1,234; silver …` — the overdue amount of EU customers per tier. */
export function overdueByTier(customers: Customer[], invoices: Invoice[]): string {
  const tierOf = new Map(customers.filter((c) => c.region === 'EU').map((c) => [c.id, c.tier]));
  const sums: Record<string, number> = {};
  for (const invoice of invoices) {
    const tier = tierOf.get(invoice.customerId);
    if (invoice.status === 'overdue' && tier !== undefined) sums[tier] = (sums[tier] ?? 0) + invoice.amount;
  }
  return TIERS.map((tier) => `${tier} $${sums[tier] ?? 0}`).join('; ');
}

export function createCrmServer(): McpServer {
  const server = new McpServer({ name: 'crm', version: '1.0.0' });
  server.registerTool(
    'list_customers',
    {
      description: 'Customers { id, name, region, tier }, optionally of one region (EU, US, APAC).',
      inputSchema: { region: z.enum(REGIONS).optional() },
      annotations: { readOnlyHint: true },
    },
    ({ region }) => json({ customers: CUSTOMERS.filter((c) => region === undefined || c.region === region) }),
  );
  return server;
}

export function createBillingServer(): McpServer {
  const server = new McpServer({ name: 'billing', version: '1.0.0' });
  server.registerTool(
    'list_invoices',
    {
      description: `Invoices { id, customerId, status, amount }, optionally of one status (paid, open, overdue), ${PAGE_LIMIT} at most per page; pass nextCursor back as cursor for the next page.`,
      inputSchema: {
        status: z.enum(['paid', 'open', 'overdue']).optional(),
        cursor: z.string().optional(),
        limit: z.number().int().min(1).max(PAGE_LIMIT).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    ({ status, cursor, limit }) =>
      page(
        INVOICES.filter((i) => status === undefined || i.status === status),
        'invoices',
        cursor,
        limit,
      ),
  );
  return server;
}

// ---------------------------------------------------------------------------------------------
// orders

export interface Order {
  id: string;
  month: string;
  status: 'completed' | 'refunded' | 'pending';
  amount: number;
}

export const ORDERS: Order[] = Array.from({ length: 100_000 }, (_, i) => ({
  id: `o${i}`,
  month: MONTHS[(i * 5) % 12]!,
  status: i % 5 === 0 ? 'refunded' : i % 7 === 0 ? 'pending' : 'completed',
  amount: ((i * 53) % 900) + 10,
}));

/** `2026-01 $123; …` — completed revenue per month. */
export function revenueByMonth(orders: Order[]): string {
  const sums: Record<string, number> = {};
  for (const order of orders)
    if (order.status === 'completed') sums[order.month] = (sums[order.month] ?? 0) + order.amount;
  return MONTHS.map((month) => `${month} $${sums[month] ?? 0}`).join('; ');
}

export function createOrdersServer(): McpServer {
  const server = new McpServer({ name: 'orders', version: '1.0.0' });
  server.registerTool(
    'list_orders',
    {
      description: `Orders { id, month, status, amount }, optionally of one status (completed, refunded, pending) and month ("2026-03"), ${PAGE_LIMIT} at most per page; pass nextCursor back as cursor for the next page.`,
      inputSchema: {
        status: z.enum(['completed', 'refunded', 'pending']).optional(),
        month: z.string().optional(),
        cursor: z.string().optional(),
        limit: z.number().int().min(1).max(PAGE_LIMIT).optional(),
      },
      annotations: { readOnlyHint: true },
    },
    ({ status, month, cursor, limit }) =>
      page(
        ORDERS.filter(
          (o) => (status === undefined || o.status === status) && (month === undefined || o.month === month),
        ),
        'orders',
        cursor,
        limit,
      ),
  );
  return server;
}
