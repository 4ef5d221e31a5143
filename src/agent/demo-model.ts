/**
 * @module
 * The `demo` model: a scripted stand-in for an LLM, **not AI**, so codecall's main job can be
 * tried offline. It plays one task, "which team members exceeded their Q<n> <category> budget?",
 * against the example expense server (`examples/codecall.json`), the way a capable model would
 * in code mode:
 *
 * 1. it calls `search_tools`;
 * 2. it reads the tool paths from the search result (`tools.<server>.get_team_members` …) and
 *    calls `execute_code` with a script that reads the members, their budgets by level and every
 *    expense line item of the year, and prints only the answer;
 * 3. it answers with what the script printed.
 *
 * The quarter (`Q1`–`Q4`) and the category (`travel`, `lodging`, `meals`, `software`,
 * `equipment`, `training`) come from the task's words; the defaults are Q3 and travel. Anything
 * else gets an answer saying what the demo can do. It reports zero token usage (it is not a
 * provider); the savings meter counts its requests like any other model's.
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

/** Categories of the example expense server. */
const CATEGORIES = ['travel', 'lodging', 'meals', 'software', 'equipment', 'training'] as const;
/** Tools the demo script needs, by MCP name. */
const NEEDED = ['get_team_members', 'get_budget_by_level', 'get_expenses'] as const;

type Needed = (typeof NEEDED)[number];

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
    return Promise.resolve(this.#respond(request));
  }

  #respond(request: GenerateRequest): GenerateResponse {
    const messages = request.messages;
    const step = messages.filter((m) => m.role === 'assistant').length + 1;
    const last = messages.at(-1);
    const offered = new Set(request.tools.map((t) => t.name));
    if (last?.role !== 'tool') {
      if (!offered.has(SEARCH_TOOLS_NAME) || !offered.has(EXECUTE_CODE_NAME)) {
        return say(
          'The demo model only plays code mode (search_tools, then execute_code). Run it without --mode direct.',
        );
      }
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
        return say(
          `The demo model needs the example expense server's tools (${missing.join(', ') || NEEDED.join(', ')} not found). ` +
            'Run it with --config examples/codecall.json.',
        );
      }
      const question = demoQuestion(firstUserText(messages));
      return call(
        `demo_${step}`,
        EXECUTE_CODE_NAME,
        { code: demoScript(paths as Record<Needed, string>, question) },
        'I will read the members, their budgets and every expense line item in a script, and print only the answer.',
      );
    }
    if (asked.name === EXECUTE_CODE_NAME) {
      if (result.isError === true) return say(`The script failed, so I have no answer:\n${result.content}`);
      const stdout = stdoutOf(result.content);
      return say(stdout === '' ? 'The script printed nothing, so I have no answer.' : stdout);
    }
    return say('The demo model only knows search_tools and execute_code.');
  }
}
