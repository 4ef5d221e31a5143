/**
 * @module
 * The `demo` model: a scripted stand-in for an LLM, **not AI**, so codecall's main job can be
 * tried offline. It plays one task, "which team members exceeded their Q<n> <category> budget?",
 * against the example expense server (`examples/codecall.json`), the way a capable model would.
 *
 * In code mode:
 * 1. it calls `search_tools`;
 * 2. it reads the tool paths from the search result (`tools.<server>.get_team_members` …) and
 *    calls `execute_code` with a script that reads the members, their budgets by level and every
 *    expense line item of the year, and prints only the answer;
 * 3. it answers with what the script printed.
 *
 * In direct mode it calls the tools one by one as a careful model would, using every filter they
 * offer: the members; then, in one response, the budget of each distinct level for the quarter
 * and each member's expenses filtered by quarter and category (following `nextOffset`); then it
 * answers from the results in its context.
 *
 * The quarter (`Q1`–`Q4`) and the category (`travel`, `lodging`, `meals`, `software`,
 * `equipment`, `training`) come from the task's words; the defaults are Q3 and travel. Any other
 * task, or a configuration without the expense tools, is refused with `PROVIDER_REQUEST_FAILED`
 * (details `{ provider: "demo", reason }`) saying plainly that this is a demo that knows one
 * task, so the run ends without an answer (`codecall run` exits 1). It reports zero token usage
 * (it is not a provider); the savings meter counts its requests like any other model's.
 */
import { CodecallError } from '../errors.js';
import type {
  ContentPart,
  GenerateOptions,
  GenerateRequest,
  GenerateResponse,
  LanguageModel,
  Message,
  ToolCallPart,
} from '../providers/language-model.js';
import { EXECUTE_CODE_NAME, SEARCH_TOOLS_NAME } from '../meta/index.js';

/** The model spec that selects {@link DemoLanguageModel} (`--model demo`). */
export const DEMO_MODEL_NAME = 'demo';

/** The query the demo model sends to `search_tools`. */
export const DEMO_SEARCH_QUERY = 'team members, their expense line items and budgets by level';

/** The pattern the demo model sends to a regex tool search (Anthropic's `tool_search_tool_regex`). */
export const DEMO_SEARCH_PATTERN = '(?i)team|budget|expense';

/**
 * Names of a vendor endpoint's client-tool search tools (Anthropic's BM25 and regex variants,
 * OpenAI's `tool_search`): the demo model loads the client's deferred tools with them.
 */
const CLIENT_SEARCH_TOOLS = ['tool_search_tool_bm25', 'tool_search_tool_regex', 'tool_search'] as const;

/** Categories of the example expense server. */
const CATEGORIES = ['travel', 'lodging', 'meals', 'software', 'equipment', 'training'] as const;
/** Tools the demo script needs, by MCP name. */
const NEEDED = ['get_team_members', 'get_budget_by_level', 'get_expenses'] as const;

type Needed = (typeof NEEDED)[number];

/** The one task the demo knows, as `codecall run --help` and its refusals quote it. */
export const DEMO_TASK = 'Which team members exceeded their Q3 travel budget?';

/** Why the demo refuses: a task it does not know, or a configuration without its tools. */
export type DemoRefusal = 'unknown-task' | 'tools-missing';

function refuse(reason: DemoRefusal, why: string): CodecallError {
  return new CodecallError(
    'PROVIDER_REQUEST_FAILED',
    `${why} The demo model is a scripted stand-in, not AI: it only knows the task "${DEMO_TASK}" ` +
      `(any quarter Q1–Q4 and category ${CATEGORIES.join(', ')}) on the example expense server ` +
      '(--config examples/codecall.json). For anything else choose a real model: --model anthropic:<model> ' +
      'or --model openai:<model>.',
    { details: { provider: 'demo', retryable: false, reason } },
  );
}

/** True when `task` is the demo's task: who went over which budget. */
export function isDemoTask(task: string): boolean {
  return /\bbudgets?\b/i.test(task) && /\b(exceed\w*|over\w*|above|beyond)\b/i.test(task);
}

function zeroUsage(): GenerateResponse['usage'] {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

function say(text: string): GenerateResponse {
  return { content: [{ type: 'text', text }], stopReason: 'end_turn', usage: zeroUsage() };
}

function call(id: string, name: string, input: unknown, words: string): GenerateResponse {
  const content: ContentPart[] = [
    { type: 'text', text: words },
    { type: 'tool_call', id, name, input },
  ];
  return { content, stopReason: 'tool_use', usage: zeroUsage() };
}

/** The quarter and category a task asks about. */
export function demoQuestion(task: string): { quarter: string; category: string } {
  const quarter = /\bQ([1-4])\b/i.exec(task)?.[1];
  const lower = task.toLowerCase();
  const category = CATEGORIES.find((c) => lower.includes(c)) ?? 'travel';
  return { quarter: quarter === undefined ? 'Q3' : `Q${quarter}`, category };
}

/** The script the demo model runs, over the tool paths found by search (`tools.expenses.get_expenses`…). */
export function demoScript(
  paths: Record<Needed, string>,
  question: { quarter: string; category: string },
): string {
  return `// Which team members exceeded their ${question.quarter} ${question.category} budget?
const QUARTER = ${JSON.stringify(question.quarter)};
const CATEGORY = ${JSON.stringify(question.category)};
const { members } = await ${paths.get_team_members}();

// Budgets depend only on the level: one call per distinct level, in parallel.
const levels = [...new Set(members.map((m) => m.level))];
const budgets = Object.fromEntries(
  await Promise.all(
    levels.map(async (level) => [level, (await ${paths.get_budget_by_level}({ level, quarter: QUARTER })).budgets[CATEGORY]]),
  ),
);

// Every line item of the year, 1,000 per page; only sums stay in memory.
const spent = new Map();
const byCategory = new Map();
let offset = 0;
let items = 0;
while (offset !== null) {
  const page = await ${paths.get_expenses}({ offset, limit: 1000 });
  for (const item of page.items) {
    if (item.status === 'rejected') continue;
    byCategory.set(item.category, (byCategory.get(item.category) ?? 0) + item.amount);
    if (item.quarter === QUARTER && item.category === CATEGORY) {
      spent.set(item.memberId, (spent.get(item.memberId) ?? 0) + item.amount);
    }
  }
  items += page.items.length;
  offset = page.nextOffset;
}

const over = members
  .map((m) => ({ ...m, spent: spent.get(m.id) ?? 0, budget: budgets[m.level] ?? 0 }))
  .filter((m) => m.spent > m.budget)
  .sort((a, b) => b.spent - b.budget - (a.spent - a.budget));
const total = [...byCategory.values()].reduce((sum, v) => sum + v, 0);
const top = [...byCategory].sort((a, b) => b[1] - a[1]).slice(0, 3);
console.log(
  \`Scanned \${items} line items: $\${total.toFixed(0)} spent this year; top categories:\`,
  top.map(([c, v]) => \`\${c} $\${v.toFixed(0)}\`).join(', '),
);
console.log(\`\${over.length} of \${members.length} team members exceeded their \${QUARTER} \${CATEGORY} budget:\`);
for (const m of over) {
  console.log(\`- \${m.name} (\${m.level}): $\${m.spent.toFixed(2)} of $\${m.budget} (+$\${(m.spent - m.budget).toFixed(2)})\`);
}
`;
}

/** Reads `tools.<server>.<tool>` paths of the needed tools from a `search_tools` result. */
function findPaths(text: string): Partial<Record<Needed, string>> {
  const paths: Partial<Record<Needed, string>> = {};
  for (const match of text.matchAll(/await (tools\.[A-Za-z_$][\w$]*\.([A-Za-z_$][\w$]*))\(/g)) {
    const member = match[2] as Needed;
    if ((NEEDED as readonly string[]).includes(member)) paths[member] ??= match[1]!;
  }
  return paths;
}

function stdoutOf(content: string): string {
  const match = /^stdout:\n([\s\S]*?)(?:\n\n(?:stderr:|return value:|exit status:)|$)/.exec(content);
  return match?.[1]?.trim() ?? '';
}

function firstUserText(messages: readonly Message[]): string {
  const first = messages.find((m) => m.role === 'user');
  return first?.role === 'user' ? first.content : '';
}

/**
 * A scripted stand-in for an LLM that plays the expense demo (see the module comment). Decides
 * each response from the conversation alone, so it needs no state.
 *
 * @example
 * ```ts
 * const agent = await createOrchestrator({ model: new DemoLanguageModel(), load: { path: 'examples/codecall.json' } });
 * console.log((await agent.run('Which team members exceeded their Q3 travel budget?')).answer);
 * ```
 */
export class DemoLanguageModel implements LanguageModel {
  readonly provider = 'demo';
  readonly modelId = 'expense-demo';

  generate(request: GenerateRequest, options: GenerateOptions = {}): Promise<GenerateResponse> {
    if (options.signal?.aborted) {
      return Promise.reject(
        new CodecallError('ABORTED', 'The demo model call was cancelled.', { cause: options.signal.reason }),
      );
    }
    try {
      return Promise.resolve(this.#respond(request));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  #respond(request: GenerateRequest): GenerateResponse {
    const messages = request.messages;
    const task = firstUserText(messages);
    if (!isDemoTask(task)) throw refuse('unknown-task', `The demo model cannot answer "${clip(task)}".`);
    const offered = new Set(request.tools.map((t) => t.name));
    if (!offered.has(SEARCH_TOOLS_NAME) || !offered.has(EXECUTE_CODE_NAME))
      return respondDirect(request, task);
    const clientSearch = request.tools.find((t) =>
      (CLIENT_SEARCH_TOOLS as readonly string[]).includes(t.name),
    )?.name;
    return respondCode(messages, task, clientPaths(request), clientSearch);
  }
}

/** Characters of a task quoted in a refusal. */
const MAX_QUOTED_TASK_CHARS = 80;

function clip(text: string): string {
  const line = text.trim().replace(/\s+/g, ' ');
  return line.length > MAX_QUOTED_TASK_CHARS ? `${line.slice(0, MAX_QUOTED_TASK_CHARS)}…` : line;
}

/**
 * The paths of the needed tools when the client owns them (a vendor endpoint declares them in
 * `execute_code`'s description as `tools.client.<name>`): no search is needed then.
 */
function clientPaths(request: GenerateRequest): Record<Needed, string> | undefined {
  const text = request.tools.find((t) => t.name === EXECUTE_CODE_NAME)?.description ?? '';
  if (!/\bclient: \{/.test(text)) return undefined;
  const declared = NEEDED.every((name) => new RegExp(`\\b${name}\\(`).test(text));
  return declared
    ? (Object.fromEntries(NEEDED.map((name) => [name, `tools.client.${name}`])) as Record<Needed, string>)
    : undefined;
}

/** Code mode: search (unless the client owns the tools), one script, its stdout as the answer. */
function respondCode(
  messages: readonly Message[],
  task: string,
  client?: Record<Needed, string>,
  clientSearch?: string,
): GenerateResponse {
  const step = messages.filter((m) => m.role === 'assistant').length + 1;
  const last = messages.at(-1);
  if (last?.role !== 'tool' && client === undefined && clientSearch !== undefined) {
    return call(
      `demo_${step}`,
      clientSearch,
      { query: clientSearch.endsWith('regex') ? DEMO_SEARCH_PATTERN : DEMO_SEARCH_QUERY },
      'Let me load your tools for team members, expenses and budgets.',
    );
  }
  if (last?.role !== 'tool' && client !== undefined) {
    return call(
      `demo_${step}`,
      EXECUTE_CODE_NAME,
      { code: demoScript(client, demoQuestion(task)) },
      'I will read the members, their budgets and every expense line item with your tools in a script, and print only the answer.',
    );
  }
  if (last?.role !== 'tool') {
    return call(
      `demo_${step}`,
      SEARCH_TOOLS_NAME,
      { query: DEMO_SEARCH_QUERY },
      'Let me find the tools for team members, expenses and budgets.',
    );
  }
  const previous = messages.at(-2);
  const asked =
    previous?.role === 'assistant'
      ? previous.content.find((part): part is ToolCallPart => part.type === 'tool_call')
      : undefined;
  const result = asked === undefined ? undefined : last.results.find((r) => r.toolCallId === asked.id);
  if (asked === undefined || result === undefined)
    return say('The demo model lost track of the conversation.');

  if (asked.name === SEARCH_TOOLS_NAME) {
    const paths = findPaths(result.content);
    const missing = NEEDED.filter((name) => paths[name] === undefined);
    if (result.isError === true || missing.length > 0) {
      throw refuse(
        'tools-missing',
        `Search did not find the example expense server's tools (${missing.join(', ') || NEEDED.join(', ')}).`,
      );
    }
    return call(
      `demo_${step}`,
      EXECUTE_CODE_NAME,
      { code: demoScript(paths as Record<Needed, string>, demoQuestion(task)) },
      'I will read the members, their budgets and every expense line item in a script, and print only the answer.',
    );
  }
  if (asked.name === clientSearch) {
    if (result.isError === true || client === undefined)
      throw refuse(
        'tools-missing',
        `The tool search did not load the expense tools (${NEEDED.join(', ')}) for code.`,
      );
    return call(
      `demo_${step}`,
      EXECUTE_CODE_NAME,
      { code: demoScript(client, demoQuestion(task)) },
      'I will read the members, their budgets and every expense line item with your tools in a script, and print only the answer.',
    );
  }
  if (asked.name === EXECUTE_CODE_NAME) {
    if (result.isError === true) return say(`The script failed, so I have no answer:\n${result.content}`);
    const stdout = stdoutOf(result.content);
    return say(stdout === '' ? 'The script printed nothing, so I have no answer.' : stdout);
  }
  return say('The demo model only knows search_tools and execute_code.');
}

interface DemoMember {
  id: string;
  name: string;
  level: string;
}

interface DemoExpense {
  memberId: string;
  amount: number;
  status?: string;
}

/** A call the direct player makes, keyed by tool and arguments so it is made once. */
interface PlannedCall {
  name: string;
  input: Record<string, unknown>;
}

const callKey = (name: string, input: unknown): string => `${name} ${JSON.stringify(input)}`;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Direct mode: the members; then each level's budget for the quarter and each member's expenses
 * filtered by quarter and category (every page); then the answer. Stateless: the calls made so
 * far and their results are read back from the conversation.
 */
function respondDirect(request: GenerateRequest, task: string): GenerateResponse {
  const names: Partial<Record<Needed, string>> = {};
  for (const tool of request.tools) {
    const member = NEEDED.find((needed) => tool.name.endsWith(`__${needed}`));
    if (member !== undefined) names[member] ??= tool.name;
  }
  const missing = NEEDED.filter((name) => names[name] === undefined);
  if (missing.length > 0) {
    throw refuse(
      'tools-missing',
      `The example expense server's tools are not offered (${missing.join(', ')}).`,
    );
  }
  const tool = names as Record<Needed, string>;
  const question = demoQuestion(task);

  // Every call made so far, with its result (undefined while unanswered or failed).
  const made = new Map<string, unknown>();
  const inputs = new Map<string, { name: string; input: unknown }>();
  for (const message of request.messages) {
    if (message.role === 'assistant') {
      for (const part of message.content)
        if (part.type === 'tool_call') inputs.set(part.id, { name: part.name, input: part.input });
    } else if (message.role === 'tool') {
      for (const result of message.results) {
        const asked = inputs.get(result.toolCallId);
        if (asked === undefined) continue;
        if (result.isError === true)
          return say(`A tool call failed, so I have no answer:\n${result.content}`);
        made.set(callKey(asked.name, asked.input), parseJson(result.content));
      }
    }
  }
  const step = request.messages.filter((m) => m.role === 'assistant').length + 1;
  const ask = (planned: PlannedCall[], words: string): GenerateResponse => ({
    content: [
      { type: 'text', text: words },
      ...planned.map((p, i): ToolCallPart => ({
        type: 'tool_call',
        id: `demo_${step}_${i}`,
        name: p.name,
        input: p.input,
      })),
    ],
    stopReason: 'tool_use',
    usage: zeroUsage(),
  });

  const team = made.get(callKey(tool.get_team_members, {})) as { members?: DemoMember[] } | undefined;
  if (team?.members === undefined) {
    return ask([{ name: tool.get_team_members, input: {} }], 'First, the team members and their levels.');
  }
  const members = team.members;
  const wanted: PlannedCall[] = [];
  const budgets = new Map<string, number>();
  for (const level of new Set(members.map((m) => m.level))) {
    const input = { level, quarter: question.quarter };
    const answer = made.get(callKey(tool.get_budget_by_level, input)) as
      { budgets?: Record<string, number> } | undefined;
    if (answer?.budgets === undefined) wanted.push({ name: tool.get_budget_by_level, input });
    else budgets.set(level, answer.budgets[question.category] ?? 0);
  }
  const spent = new Map<string, number>();
  for (const member of members) {
    let offset: number | null = 0;
    while (offset !== null) {
      const input: Record<string, unknown> = {
        member_id: member.id,
        quarter: question.quarter,
        category: question.category,
        ...(offset > 0 ? { offset } : {}),
      };
      const page = made.get(callKey(tool.get_expenses, input)) as
        { items?: DemoExpense[]; nextOffset?: number | null } | undefined;
      if (page?.items === undefined) {
        wanted.push({ name: tool.get_expenses, input });
        break;
      }
      for (const item of page.items) {
        if (item.status !== 'rejected') spent.set(member.id, (spent.get(member.id) ?? 0) + item.amount);
      }
      offset = typeof page.nextOffset === 'number' && page.nextOffset > offset ? page.nextOffset : null;
    }
  }
  if (wanted.length > 0) {
    return ask(
      wanted,
      `Next, the ${question.quarter} budgets by level and each member's ${question.quarter} ${question.category} expenses, filtered on the server.`,
    );
  }
  const over = members
    .map((m) => ({ ...m, spent: spent.get(m.id) ?? 0, budget: budgets.get(m.level) ?? 0 }))
    .filter((m) => m.spent > m.budget)
    .sort((a, b) => b.spent - b.budget - (a.spent - a.budget));
  const lines = [
    `${over.length} of ${members.length} team members exceeded their ${question.quarter} ${question.category} budget:`,
    ...over.map(
      (m) =>
        `- ${m.name} (${m.level}): $${m.spent.toFixed(2)} of $${m.budget} (+$${(m.spent - m.budget).toFixed(2)})`,
    ),
  ];
  return say(lines.join('\n'));
}
