/**
 * Savings suite: how much code mode saves against direct tool calling, task by task, each task
 * played in both modes by a scripted model that follows the best strategy of its mode.
 *
 * - direct mode: every tool definition up front; the model uses every filter and pagination the
 *   tools offer (get_expenses({ quarter: 'Q3', category: 'travel' }), search_nodes('Berlin')),
 *   and calls independent tools in parallel in one step; every result enters its context.
 * - code mode: search_tools, then the script a good model writes (the same filters), then the
 *   answer from what the script printed.
 *
 * Both modes must reach the expected answer (computed from the data, not from either run): a
 * wrong answer fails the bench. The figures are reported, not judged: per task, tokens in the
 * context (Σ over model requests, o200k_base), model requests and wall time of both modes, and
 * code / direct; then the median ratio over the tasks. One task (a single small lookup) is where
 * code mode should not win. Wall time has no model latency in it (the models are scripted): in
 * real use each model request adds seconds, so the request counts matter more than the times.
 *
 * Last, the meter's own cost on a 500 KB run: the script's wall time and the host's worst
 * event-loop stall with no meter (the floor), with the meter (counting on a worker thread), and
 * with counting on the main thread (how the meter counted before).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { spawnSync } from 'node:child_process';
import { compareRuns, countTokens, createOrchestrator, type RunResult } from '../src/agent/index.js';
import { parseConfig } from '../src/config/index.js';
import { CodecallRuntime, type ToolResultEvent } from '../src/execute/index.js';
import type { GenerateRequest, GenerateResponse, ToolMessage } from '../src/providers/language-model.js';
import {
  ScriptedLanguageModel,
  scriptedResponse,
  text,
  toolCall,
  type ScriptedStep,
} from '../src/testing/index.js';
import {
  CATEGORIES,
  createExpenseData,
  createExpenseServer,
  inMemoryTransport,
  LEVELS,
  overBudgetMembers,
} from '../src/testing/servers/index.js';
import { figure, finish } from './harness.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const NPM = join(ROOT, 'node_modules', '@modelcontextprotocol');
const work = mkdtempSync(join(tmpdir(), 'codecall-savings-'));
process.on('exit', () => rmSync(work, { recursive: true, force: true }));

// ---------------------------------------------------------------------------------------------
// Players

type Mode = 'code' | 'direct';

/** The contents of the tool results the last request carries, in call order. */
function results(request: GenerateRequest): string[] {
  const last = request.messages.at(-1) as ToolMessage;
  return last.results.map((r) => r.content);
}

/** The offered direct name of an MCP tool (`server__tool`, made identifier-safe). */
function directName(request: GenerateRequest, server: string, tool: string): string {
  const safe = (name: string): string => name.replace(/[^A-Za-z0-9_]/g, '_');
  const wanted = `${safe(server)}__${safe(tool)}`;
  const found = request.tools.find((t) => safe(t.name) === wanted);
  if (!found) throw new Error(`direct mode does not offer ${server}.${tool}`);
  return found.name;
}

/** One step of parallel direct calls, named by MCP tool. */
function calls(
  request: GenerateRequest,
  list: { server: string; tool: string; input: Record<string, unknown> }[],
): GenerateResponse {
  return scriptedResponse(
    list.map((c, i) => ({
      type: 'tool_call' as const,
      id: `call_${request.messages.length}_${i}`,
      name: directName(request, c.server, c.tool),
      input: c.input,
    })),
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

/**
 * The code-mode player: search, then the script, then the answer from what it printed. The
 * script is written only once the search result shows every tool it calls.
 */
function codePlayer(
  query: string,
  needs: string[],
  script: string,
  after: ScriptedStep[] = [],
): ScriptedStep[] {
  return [
    toolCall('search_tools', { query }),
    {
      label: 'search found the tools the script calls',
      expect: (request) => {
        const found = results(request)[0] ?? '';
        const missing = needs.filter((path) => !found.includes(path));
        if (missing.length > 0) throw new Error(`search did not show ${missing.join(', ')}:\n${found}`);
      },
      response: toolCall('execute_code', { code: script }),
    },
    ...(after.length > 0 ? after : [(request: GenerateRequest) => text(printed(request))]),
  ];
}

// ---------------------------------------------------------------------------------------------
// Servers

interface Setup {
  config: Record<string, unknown>;
  file: string;
  runtimeOptions: NonNullable<Parameters<typeof createOrchestrator>[0]['runtimeOptions']>;
}

function expenses(extra: Record<string, unknown> = {}): Setup {
  return {
    config: { mcpServers: { expenses: { command: 'unused', ...extra } } },
    file: join(ROOT, 'examples', 'codecall.json'),
    runtimeOptions: {
      history: false,
      tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
    },
  };
}

function npmServer(name: string, config: Record<string, unknown>): Setup {
  return {
    config: { mcpServers: { [name]: config } },
    file: join(work, 'codecall.json'),
    runtimeOptions: { history: false },
  };
}

// ---------------------------------------------------------------------------------------------
// Tasks

interface Task {
  name: string;
  prompt: string;
  setup: () => Setup;
  expected: string;
  code: () => ScriptedStep[];
  direct: () => ScriptedStep[];
}

const data = createExpenseData();
const money = (n: number): string => `$${n.toFixed(2)}`;

// 1. Over budget: the canonical case.
const overQ3 = overBudgetMembers(data, 'Q3', 'travel')
  .map((o) => o.member.name)
  .sort();
const overBudget: Task = {
  name: 'expenses: who exceeded the Q3 travel budget',
  prompt: 'Which team members exceeded their Q3 travel budget?',
  setup: () => expenses(),
  expected: `${overQ3.length} of ${data.members.length} exceeded: ${overQ3.join(', ')}`,
  code: () =>
    codePlayer(
      'team members, expense line items, budget by level',
      [
        'tools.expenses.get_team_members',
        'tools.expenses.get_expenses',
        'tools.expenses.get_budget_by_level',
      ],
      `const [{ members }, { items }, ...budgets] = await Promise.all([
  tools.expenses.get_team_members({}),
  tools.expenses.get_expenses({ quarter: 'Q3', category: 'travel' }),
  ...${JSON.stringify(LEVELS)}.map((level) => tools.expenses.get_budget_by_level({ level, quarter: 'Q3' })),
]);
const budget = Object.fromEntries(budgets.map((b) => [b.level, b.budgets.travel]));
const spent = new Map();
for (const item of items) if (item.status !== 'rejected') spent.set(item.memberId, (spent.get(item.memberId) ?? 0) + item.amount);
const over = members.filter((m) => (spent.get(m.id) ?? 0) > budget[m.level]).map((m) => m.name).sort();
console.log(\`\${over.length} of \${members.length} exceeded: \${over.join(', ')}\`);`,
    ),
  direct: () => [
    (request) =>
      calls(request, [
        { server: 'expenses', tool: 'get_team_members', input: {} },
        { server: 'expenses', tool: 'get_expenses', input: { quarter: 'Q3', category: 'travel' } },
        ...LEVELS.map((level) => ({
          server: 'expenses',
          tool: 'get_budget_by_level',
          input: { level, quarter: 'Q3' },
        })),
      ]),
    (request) => {
      const [membersText, itemsText, ...budgetTexts] = results(request);
      const members = (JSON.parse(membersText!) as { members: { id: string; name: string; level: string }[] })
        .members;
      const items = (
        JSON.parse(itemsText!) as { items: { memberId: string; amount: number; status: string }[] }
      ).items;
      const budget = new Map(
        budgetTexts.map((t) => {
          const b = JSON.parse(t) as { level: string; budgets: { travel: number } };
          return [b.level, b.budgets.travel] as const;
        }),
      );
      const spent = new Map<string, number>();
      for (const item of items)
        if (item.status !== 'rejected')
          spent.set(item.memberId, (spent.get(item.memberId) ?? 0) + item.amount);
      const over = members
        .filter((m) => (spent.get(m.id) ?? 0) > budget.get(m.level)!)
        .map((m) => m.name)
        .sort();
      return text(`${over.length} of ${members.length} exceeded: ${over.join(', ')}`);
    },
  ],
};

// 2. A year's approved spend per category: no aggregate tool, so every approved item is read.
const perCategory = CATEGORIES.map((category) => {
  const total = data.expenses
    .filter((e) => e.status === 'approved' && e.category === category)
    .reduce((sum, e) => sum + e.amount, 0);
  return `${category} ${money(total)}`;
}).join(', ');
const spendPerCategory: Task = {
  name: 'expenses: approved spend per category, whole year',
  prompt: 'How much approved spend was there this year in each expense category?',
  setup: () => expenses(),
  expected: perCategory,
  code: () =>
    codePlayer(
      'expense line items by category and status',
      ['tools.expenses.get_expenses'],
      `const categories = ${JSON.stringify(CATEGORIES)};
const pages = await Promise.all(categories.map((category) => tools.expenses.get_expenses({ category, status: 'approved' })));
console.log(categories.map((c, i) => \`\${c} $\${pages[i].items.reduce((s, e) => s + e.amount, 0).toFixed(2)}\`).join(', '));`,
    ),
  direct: () => [
    // One filtered call per category, in parallel: each result stays under the 256 KB cut.
    (request) =>
      calls(
        request,
        CATEGORIES.map((category) => ({
          server: 'expenses',
          tool: 'get_expenses',
          input: { category, status: 'approved' },
        })),
      ),
    (request) => {
      const totals = results(request).map((t) =>
        (JSON.parse(t) as { items: { amount: number }[] }).items.reduce((s, e) => s + e.amount, 0),
      );
      return text(CATEGORIES.map((c, i) => `${c} ${money(totals[i]!)}`).join(', '));
    },
  ],
};

// 3. A chain with writes: flag the largest pending Q3 travel item of each over-budget member
//    (flag_expense is callable only directly, as in examples/tool-chain).
const toFlag = overBudgetMembers(data, 'Q3', 'travel')
  .map(
    ({ member }) =>
      data.expenses
        .filter(
          (e) =>
            e.memberId === member.id &&
            e.quarter === 'Q3' &&
            e.category === 'travel' &&
            e.status === 'pending',
        )
        .sort((a, b) => b.amount - a.amount)[0],
  )
  .filter((e) => e !== undefined)
  .map((e) => e.id)
  .sort();
const flagReason = 'Q3 travel over budget; largest pending item';
const flagAnswer = (ids: string[]): string => `flagged ${ids.length}: ${[...ids].sort().join(', ')}`;
const flagChain: Task = {
  name: 'expenses: flag the largest pending item of each over-budget member',
  prompt:
    'For each team member over their Q3 travel budget, flag their largest pending Q3 travel expense for review.',
  setup: () => expenses({ tools: { flag_expense: { allowedCallers: ['direct'], deferLoading: false } } }),
  expected: flagAnswer(toFlag),
  code: () => {
    let ids: string[] = [];
    return codePlayer(
      'team members, expense line items, budget by level',
      [
        'tools.expenses.get_team_members',
        'tools.expenses.get_expenses',
        'tools.expenses.get_budget_by_level',
      ],
      `const [{ members }, { items }, ...budgets] = await Promise.all([
  tools.expenses.get_team_members({}),
  tools.expenses.get_expenses({ quarter: 'Q3', category: 'travel' }),
  ...${JSON.stringify(LEVELS)}.map((level) => tools.expenses.get_budget_by_level({ level, quarter: 'Q3' })),
]);
const budget = Object.fromEntries(budgets.map((b) => [b.level, b.budgets.travel]));
const flag = [];
for (const m of members) {
  const mine = items.filter((i) => i.memberId === m.id && i.status !== 'rejected');
  if (mine.reduce((s, i) => s + i.amount, 0) <= budget[m.level]) continue;
  const top = mine.filter((i) => i.status === 'pending').sort((a, b) => b.amount - a.amount)[0];
  if (top) flag.push(top.id);
}
console.log(JSON.stringify(flag));`,
      [
        (request) => {
          ids = JSON.parse(printed(request)) as string[];
          return calls(
            request,
            ids.map((id) => ({
              server: 'expenses',
              tool: 'flag_expense',
              input: { expense_id: id, reason: flagReason },
            })),
          );
        },
        (request) => {
          if (results(request).some((r) => !r.includes('"flagged"'))) throw new Error('a flag failed');
          return text(flagAnswer(ids));
        },
      ],
    );
  },
  direct: () => {
    const ids: string[] = [];
    return [
      ...overBudget.direct().slice(0, 1),
      (request) => {
        const [membersText, itemsText, ...budgetTexts] = results(request);
        const members = (JSON.parse(membersText!) as { members: { id: string; level: string }[] }).members;
        const items = (
          JSON.parse(itemsText!) as {
            items: { id: string; memberId: string; amount: number; status: string }[];
          }
        ).items;
        const budget = new Map(
          budgetTexts.map((t) => {
            const b = JSON.parse(t) as { level: string; budgets: { travel: number } };
            return [b.level, b.budgets.travel] as const;
          }),
        );
        for (const m of members) {
          const mine = items.filter((i) => i.memberId === m.id && i.status !== 'rejected');
          if (mine.reduce((s, i) => s + i.amount, 0) <= budget.get(m.level)!) continue;
          const top = mine.filter((i) => i.status === 'pending').sort((a, b) => b.amount - a.amount)[0];
          if (top) ids.push(top.id);
        }
        return calls(
          request,
          ids.map((id) => ({
            server: 'expenses',
            tool: 'flag_expense',
            input: { expense_id: id, reason: flagReason },
          })),
        );
      },
      (request) => {
        if (results(request).some((r) => !r.includes('"flagged"'))) throw new Error('a flag failed');
        return text(flagAnswer(ids));
      },
    ];
  },
};

// 4. One small lookup: where code mode should not win.
const l3q2 = data.budgets.find((b) => b.level === 'L3' && b.quarter === 'Q2')!.budgets.travel;
const oneLookup: Task = {
  name: 'expenses: one lookup (L3 travel budget in Q2)',
  prompt: 'What is the Q2 travel budget of an L3 team member?',
  setup: () => expenses(),
  expected: `L3 Q2 travel budget: $${l3q2}`,
  code: () =>
    codePlayer(
      'budget of a level',
      ['tools.expenses.get_budget_by_level'],
      `const b = await tools.expenses.get_budget_by_level({ level: 'L3', quarter: 'Q2' });
console.log(\`L3 Q2 travel budget: $\${b.budgets.travel}\`);`,
    ),
  direct: () => [
    (request) =>
      calls(request, [
        { server: 'expenses', tool: 'get_budget_by_level', input: { level: 'L3', quarter: 'Q2' } },
      ]),
    (request) => {
      const b = JSON.parse(results(request)[0]!) as { budgets: { travel: number } };
      return text(`L3 Q2 travel budget: $${b.budgets.travel}`);
    },
  ],
};

// 5. Log analysis over @modelcontextprotocol/server-filesystem (examples/log-analysis): no tool
//    filters inside a file, so direct calling reads every file.
const logDir = join(work, 'logs');
mkdirSync(logDir);
const LOG_LINES_PER_FILE = 500;
spawnSync(
  process.execPath,
  [join(ROOT, 'examples', 'log-analysis', 'generate-log.mjs'), logDir, String(LOG_LINES_PER_FILE)],
  {
    stdio: 'ignore',
  },
);
const LOG_FILES = ['app-1.log', 'app-2.log', 'app-3.log', 'app-4.log'];
/** The answer from the log text: 5xx count and the endpoint with the most. */
function summarizeLog(log: string): string {
  const byEndpoint = new Map<string, number>();
  let total = 0;
  for (const line of log.split('\n')) {
    const m = /^\S+ \w+\s+(\w+) (\S+) (5\d\d) /.exec(line);
    if (!m) continue;
    total++;
    const endpoint = `${m[1]} ${m[2]}`;
    byEndpoint.set(endpoint, (byEndpoint.get(endpoint) ?? 0) + 1);
  }
  const top = [...byEndpoint].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]!;
  return `${total} server errors; most on ${top[0]} (${top[1]})`;
}
const { readFileSync } = await import('node:fs');
const logExpected = summarizeLog(LOG_FILES.map((f) => readFileSync(join(logDir, f), 'utf8')).join(''));
const logAnalysis: Task = {
  name: `filesystem: 5xx errors in 4 log files (${LOG_LINES_PER_FILE * 4} lines)`,
  prompt: `How many 5xx server errors are in the logs in ${logDir}, and which endpoint has the most?`,
  setup: () =>
    npmServer('fs', {
      command: process.execPath,
      args: [join(NPM, 'server-filesystem', 'dist', 'index.js'), logDir],
    }),
  expected: logExpected,
  code: () =>
    codePlayer(
      'list a directory and read text files',
      ['tools.fs.list_directory', 'tools.fs.read_text_file'],
      `const dir = ${JSON.stringify(logDir)};
const { content: listing } = await tools.fs.list_directory({ path: dir });
const files = [...listing.matchAll(/^\\[FILE\\] (\\S+\\.log)$/gm)].map((m) => m[1]).sort();
const texts = await Promise.all(files.map(async (f) => (await tools.fs.read_text_file({ path: dir + '/' + f })).content));
const byEndpoint = new Map();
let total = 0;
for (const line of texts.join('').split('\\n')) {
  const m = /^\\S+ \\w+\\s+(\\w+) (\\S+) (5\\d\\d) /.exec(line);
  if (!m) continue;
  total++;
  const endpoint = m[1] + ' ' + m[2];
  byEndpoint.set(endpoint, (byEndpoint.get(endpoint) ?? 0) + 1);
}
const top = [...byEndpoint].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0];
console.log(\`\${total} server errors; most on \${top[0]} (\${top[1]})\`);`,
    ),
  direct: () => [
    (request) => calls(request, [{ server: 'fs', tool: 'list_directory', input: { path: logDir } }]),
    (request) => {
      const files = [...results(request)[0]!.matchAll(/\[FILE\] (\S+\.log)/g)].map((m) => m[1]!).sort();
      return calls(
        request,
        files.map((f) => ({ server: 'fs', tool: 'read_text_file', input: { path: join(logDir, f) } })),
      );
    },
    (request) => {
      const texts = results(request).map((t) => (JSON.parse(t) as { content: string }).content);
      return text(summarizeLog(texts.join('')));
    },
  ],
};

// 6. A knowledge graph over @modelcontextprotocol/server-memory: people, companies, cities.
const memoryFile = join(work, 'memory.jsonl');
const CITIES = ['Berlin', 'Paris', 'Lisbon', 'Austin', 'Osaka', 'Nairobi', 'Toronto', 'Sydney'];
const COMPANIES = ['Acme Corp', 'Globex', 'Initech', 'Umbrella', 'Hooli', 'Stark Industries'];
const people = Array.from({ length: 400 }, (_, i) => ({
  name: `Person ${String(i).padStart(3, '0')}`,
  city: CITIES[(i * 7) % CITIES.length]!,
  company: COMPANIES[(i * 5 + (i >> 3)) % COMPANIES.length]!,
  year: 2008 + ((i * 3) % 17),
}));
writeFileSync(
  memoryFile,
  [
    ...COMPANIES.map((name) => ({
      type: 'entity',
      name,
      entityType: 'company',
      observations: [`a company`],
    })),
    ...people.map((p) => ({
      type: 'entity',
      name: p.name,
      entityType: 'person',
      observations: [`lives in ${p.city}`, `joined in ${p.year}`, `prefers email`],
    })),
    ...people.map((p) => ({ type: 'relation', from: p.name, to: p.company, relationType: 'works_at' })),
  ]
    .map((line) => JSON.stringify(line))
    .join('\n') + '\n',
);
const acmeBerlin = people
  .filter((p) => p.company === 'Acme Corp' && p.city === 'Berlin')
  .map((p) => p.name)
  .sort();
interface Graph {
  entities: { name: string; observations: string[] }[];
  relations: { from: string; to: string; relationType: string }[];
}
const acmeInBerlin = (graph: Graph): string => {
  const berliners = new Set(
    graph.entities.filter((e) => e.observations.includes('lives in Berlin')).map((e) => e.name),
  );
  const names = graph.relations
    .filter((r) => r.relationType === 'works_at' && r.to === 'Acme Corp' && berliners.has(r.from))
    .map((r) => r.from)
    .sort();
  return `${names.length} at Acme Corp in Berlin: ${names.join(', ')}`;
};
const knowledgeGraph: Task = {
  name: 'memory: people at Acme Corp who live in Berlin (406 entities)',
  prompt: 'Which people who work at Acme Corp live in Berlin?',
  setup: () =>
    npmServer('memory', {
      command: process.execPath,
      args: [join(NPM, 'server-memory', 'dist', 'index.js')],
      env: { MEMORY_FILE_PATH: memoryFile },
    }),
  expected: `${acmeBerlin.length} at Acme Corp in Berlin: ${acmeBerlin.join(', ')}`,
  code: () =>
    codePlayer(
      'search knowledge graph nodes',
      ['tools.memory.search_nodes'],
      `const graph = await tools.memory.search_nodes({ query: 'Berlin' });
const berliners = new Set(graph.entities.filter((e) => e.observations.includes('lives in Berlin')).map((e) => e.name));
const names = graph.relations.filter((r) => r.relationType === 'works_at' && r.to === 'Acme Corp' && berliners.has(r.from)).map((r) => r.from).sort();
console.log(\`\${names.length} at Acme Corp in Berlin: \${names.join(', ')}\`);`,
    ),
  direct: () => [
    // The narrowest filter the server offers: the city (its search returns the people who match
    // and their relations, so the employer comes along).
    (request) => calls(request, [{ server: 'memory', tool: 'search_nodes', input: { query: 'Berlin' } }]),
    (request) => text(acmeInBerlin(JSON.parse(results(request)[0]!) as Graph)),
  ],
};

// 7. Many small dependent calls over @modelcontextprotocol/server-everything: a sum with get-sum.
const NUMBERS = Array.from({ length: 16 }, (_, i) => (i * 37) % 101);
const sumOf = (text: string): number => Number(/(-?\d+(?:\.\d+)?)\.?\s*$/.exec(text.trim())![1]);
const everythingSum: Task = {
  name: 'everything: add 16 numbers with get-sum (dependent calls)',
  prompt: `Add these numbers with the get-sum tool: ${NUMBERS.join(', ')}.`,
  setup: () =>
    npmServer('everything', {
      command: process.execPath,
      args: [join(NPM, 'server-everything', 'dist', 'index.js')],
    }),
  expected: `sum: ${NUMBERS.reduce((a, b) => a + b, 0)}`,
  code: () =>
    codePlayer(
      'sum two numbers',
      ['everything.get-sum'],
      `const sumOf = (r) => Number(/(-?\\d+(?:\\.\\d+)?)\\.?\\s*$/.exec((typeof r === 'string' ? r : JSON.stringify(r)).trim())[1]);
let values = ${JSON.stringify(NUMBERS)};
while (values.length > 1) {
  const pairs = [];
  for (let i = 0; i < values.length; i += 2) pairs.push(values.slice(i, i + 2));
  values = await Promise.all(pairs.map(async (p) => p.length === 1 ? p[0] : sumOf(await callTool('everything.get-sum', { a: p[0], b: p[1] }))));
}
console.log(\`sum: \${values[0]}\`);`,
    ),
  direct: () => {
    // A pairwise tree: 8 calls, then 4, 2, 1, each level in one step.
    let values = [...NUMBERS];
    const level = (request: GenerateRequest): GenerateResponse => {
      const pairs: number[][] = [];
      for (let i = 0; i < values.length; i += 2) pairs.push(values.slice(i, i + 2));
      return calls(
        request,
        pairs.map((p) => ({ server: 'everything', tool: 'get-sum', input: { a: p[0], b: p[1] } })),
      );
    };
    const read = (request: GenerateRequest): void => {
      values = results(request).map(sumOf);
    };
    const steps: ScriptedStep[] = [level];
    for (let n = NUMBERS.length / 2; n > 1; n /= 2) {
      steps.push((request) => {
        read(request);
        return level(request);
      });
    }
    steps.push((request) => {
      read(request);
      return text(`sum: ${values[0]}`);
    });
    return steps;
  },
};

const TASKS: Task[] = [
  overBudget,
  spendPerCategory,
  flagChain,
  oneLookup,
  logAnalysis,
  knowledgeGraph,
  everythingSum,
];

// ---------------------------------------------------------------------------------------------
// The race

async function play(task: Task, mode: Mode): Promise<RunResult> {
  const model = new ScriptedLanguageModel(mode === 'code' ? task.code() : task.direct(), {
    modelId: `${mode}-player`,
  });
  const setup = task.setup();
  const agent = await createOrchestrator({
    model,
    mode,
    config: parseConfig(setup.config, { file: setup.file, env: {} }),
    runtimeOptions: setup.runtimeOptions,
  });
  try {
    const result = await agent.run(task.prompt);
    model.assertComplete();
    return result;
  } finally {
    await agent.close();
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const n = (value: number): string => Math.round(value).toLocaleString('en-US');
const r = (value: number): string => (value >= 10 ? value.toFixed(1) : value.toFixed(3));

console.log(
  `Savings suite: ${TASKS.length} tasks, each played by a scripted model in code mode and in direct mode ` +
    '(best strategy of each mode); tokens in the context are Σ over model requests (o200k_base).\n',
);
const header = ['task', 'code tokens', 'direct tokens', 'ratio', 'requests c/d', 'wall ms c/d', 'kept out'];
const rows: string[][] = [];
const ratios: number[] = [];
let wrong = 0;
// Warm-up, not reported: the tokenizer worker, the sandbox pool and the npm servers' first start.
await play(oneLookup, 'code');
await play(oneLookup, 'direct');
for (const task of TASKS) {
  const code = await play(task, 'code');
  const direct = await play(task, 'direct');
  for (const [mode, run] of [
    ['code', code],
    ['direct', direct],
  ] as const) {
    if (run.answer !== task.expected) {
      wrong++;
      console.log(
        `  WRONG ANSWER (${mode} mode) on "${task.name}":\n    got      ${run.answer}\n    expected ${task.expected}`,
      );
    }
  }
  const c = compareRuns(code, direct);
  ratios.push(c.contextRatio);
  rows.push([
    task.name,
    n(c.code.contextTokens),
    n(c.direct.contextTokens),
    r(c.contextRatio),
    `${c.code.requests} / ${c.direct.requests}`,
    `${n(c.code.durationMs)} / ${n(c.direct.durationMs)}`,
    `${n(code.savings.toolResultTokensKeptOut)} tok, ${n(code.savings.toolDefinitionTokensDeferred)} def`,
  ]);
}
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
const line = (cells: string[]): string =>
  '  ' + cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
console.log(line(header));
for (const row of rows) console.log(line(row));
console.log(
  `\n  "kept out": tool-result tokens the code-mode scripts read that never entered the context, and\n` +
    `  tool-definition tokens deferred behind search_tools (the code-mode run's own meter).`,
);
figure(`median code / direct tokens in context (${TASKS.length} tasks)`, median(ratios), '×');
figure('range: smallest ratio', Math.min(...ratios), '×');
figure('range: largest ratio (code mode does not pay)', Math.max(...ratios), '×');
if (wrong > 0) {
  console.log(`  ${wrong} wrong answer(s): the suite is only valid when both modes answer right`);
  process.exitCode = 1;
} else console.log(`  every task: both modes gave the expected answer`);

// ---------------------------------------------------------------------------------------------
// The meter's cost on a 500 KB run

console.log('\nThe meter on a 500 KB run (examples/scripts/over-budget.ts: 2,400 line items in 3 pages):');
const runtime = await CodecallRuntime.open({
  config: parseConfig(
    { mcpServers: { expenses: { command: 'unused' } } },
    { file: join(work, 'c.json'), env: {} },
  ),
  history: false,
  tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
});
const script = readFileSync(join(ROOT, 'examples', 'scripts', 'over-budget.ts'), 'utf8');
const { ContextMeter } = await import('../src/agent/context-meter.js');
type Variant = 'none' | 'worker' | 'main';
interface MeterRun {
  scriptMs: number;
  wallMs: number;
  stallMs: number;
  bytes: number;
}
async function meterRun(variant: Variant): Promise<MeterRun> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let onToolResult: ((event: ToolResultEvent) => void) | undefined;
  let finishCount: (() => Promise<void>) | undefined;
  if (variant === 'worker') {
    const counter = new ContextMeter().scriptResults();
    onToolResult = counter.onToolResult;
    finishCount = () => counter.finish([]);
  } else if (variant === 'main') {
    // How the meter counted before: deferred past the bridge, then BPE on the main thread.
    const pending: Promise<void>[] = [];
    onToolResult = (event) => {
      pending.push(
        new Promise((done) => setImmediate(() => (countTokens(JSON.stringify(event.result)), done()))),
      );
    };
    finishCount = async () => void (await Promise.all(pending));
  }
  histogram.enable();
  const started = performance.now();
  const result = await runtime.execute(script, onToolResult ? { onToolResult } : {});
  const scriptMs = performance.now() - started;
  await finishCount?.();
  const wallMs = performance.now() - started;
  histogram.disable();
  if (result.status !== 'ok') throw new Error(`over-budget.ts failed: ${result.error?.message}`);
  return { scriptMs, wallMs, stallMs: histogram.max / 1e6, bytes: result.stats.toolResultBytes };
}
// Warm up: the tokenizer ranks load once per thread, the sandbox pool fills.
await meterRun('worker');
await meterRun('main');
const ROUNDS = 5;
const best: Record<Variant, Omit<MeterRun, 'bytes'>> = {
  none: { scriptMs: Infinity, wallMs: Infinity, stallMs: Infinity },
  worker: { scriptMs: Infinity, wallMs: Infinity, stallMs: Infinity },
  main: { scriptMs: Infinity, wallMs: Infinity, stallMs: Infinity },
};
let bytes = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (const variant of ['none', 'worker', 'main'] as const) {
    const m = await meterRun(variant);
    bytes = m.bytes;
    best[variant].scriptMs = Math.min(best[variant].scriptMs, m.scriptMs);
    best[variant].wallMs = Math.min(best[variant].wallMs, m.wallMs);
    best[variant].stallMs = Math.min(best[variant].stallMs, m.stallMs);
  }
}
await runtime.close();
console.log(`  ${n(bytes)} bytes of tool results; best of ${ROUNDS} rounds each`);
figure('script wall time, no meter (floor)', best.none.scriptMs, 'ms');
figure('script wall time, meter on a worker thread', best.worker.scriptMs, 'ms');
figure('script wall time, counting on the main thread', best.main.scriptMs, 'ms');
figure('script + all counts done, meter on a worker thread', best.worker.wallMs, 'ms');
figure('script + all counts done, counting on the main thread', best.main.wallMs, 'ms');
figure('worst event-loop stall, no meter (floor)', best.none.stallMs, 'ms');
figure('worst event-loop stall, meter on a worker thread', best.worker.stallMs, 'ms');
figure('worst event-loop stall, counting on the main thread', best.main.stallMs, 'ms');
finish();
