/**
 * Agent benchmark: the canonical case, "which team members exceeded their Q3 travel budget?",
 * over the expense server (20 members, 2,400 line items), played by the scripted model in both
 * modes against the same server in the same run.
 *
 * - code mode: search_tools → execute_code with examples/scripts/over-budget.ts → answer.
 * - direct mode (the floor): every tool definition up front; the model calls get_team_members,
 *   get_budget_by_level for each level, get_expenses for every member (20 calls in one step),
 *   and every result enters its context; then it answers from what it read.
 *
 * Figure: tokens that entered the model's context (Σ over requests, o200k_base) in code mode as a
 * ratio of direct mode. Target ≤ 0.05 (code mode ≥ 95 % below direct mode). Also shown: the
 * code-mode run's own direct-calling estimate against the measured direct run (the estimate is
 * meant to be a lower bound, so ≤ 1).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createOrchestrator, type RunResult } from '../src/agent/index.js';
import { parseConfig } from '../src/config/index.js';
import type { GenerateRequest, GenerateResponse, ToolMessage } from '../src/providers/language-model.js';
import { ScriptedLanguageModel, scriptedResponse, text, toolCall } from '../src/testing/index.js';
import { createExpenseServer, inMemoryTransport } from '../src/testing/servers/index.js';
import { figure, finish } from './harness.js';

const ROOT = resolve(import.meta.dirname ?? '.', '..');
const TASK = 'Which team members exceeded their Q3 travel budget?';
const SCRIPT = readFileSync(join(ROOT, 'examples', 'scripts', 'over-budget.ts'), 'utf8');

interface Member {
  id: string;
  name: string;
  level: string;
}
interface Item {
  memberId: string;
  quarter: string;
  category: string;
  amount: number;
  status: string;
}

function results(request: GenerateRequest): string[] {
  const last = request.messages.at(-1) as ToolMessage;
  return last.results.map((r) => r.content);
}

async function play(model: ScriptedLanguageModel, mode: 'code' | 'direct'): Promise<RunResult> {
  const agent = await createOrchestrator({
    model,
    mode,
    config: parseConfig({}, { file: join(ROOT, 'codecall.json'), env: {} }),
    runtimeOptions: {
      history: false,
      tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) } },
    },
  });
  try {
    const result = await agent.run(TASK);
    model.assertComplete();
    return result;
  } finally {
    await agent.close();
  }
}

function codeModel(): ScriptedLanguageModel {
  return new ScriptedLanguageModel([
    toolCall('search_tools', { query: 'team members, expense line items, budget by level' }),
    toolCall('execute_code', { code: SCRIPT }),
    (request) =>
      text(
        results(request)[0]!
          .replace(/^stdout:\n/, '')
          .split('\n\nexit status')[0]!,
      ),
  ]);
}

function directModel(): ScriptedLanguageModel {
  let members: Member[] = [];
  const budgets = new Map<string, number>();
  return new ScriptedLanguageModel([
    toolCall('expenses__get_team_members', {}),
    (request): GenerateResponse => {
      members = (JSON.parse(results(request)[0]!) as { members: Member[] }).members;
      const levels = [...new Set(members.map((m) => m.level))];
      return scriptedResponse(
        levels.map((level, i) => ({
          type: 'tool_call' as const,
          id: `budget_${i}`,
          name: 'expenses__get_budget_by_level',
          input: { level, quarter: 'Q3' },
        })),
      );
    },
    (request): GenerateResponse => {
      for (const content of results(request)) {
        const budget = JSON.parse(content) as { level: string; budgets: { travel: number } };
        budgets.set(budget.level, budget.budgets.travel);
      }
      return scriptedResponse(
        members.map((member, i) => ({
          type: 'tool_call' as const,
          id: `expenses_${i}`,
          name: 'expenses__get_expenses',
          input: { member_id: member.id },
        })),
      );
    },
    (request): GenerateResponse => {
      const spent = new Map<string, number>();
      for (const content of results(request)) {
        for (const item of (JSON.parse(content) as { items: Item[] }).items) {
          if (item.status === 'rejected' || item.quarter !== 'Q3' || item.category !== 'travel') continue;
          spent.set(item.memberId, (spent.get(item.memberId) ?? 0) + item.amount);
        }
      }
      const over = members.filter((m) => (spent.get(m.id) ?? 0) > (budgets.get(m.level) ?? 0));
      return text(`${over.length} of ${members.length} exceeded: ${over.map((m) => m.name).join(', ')}`);
    },
  ]);
}

console.log(`Canonical case: "${TASK}" (20 members, 2,400 line items), scripted model, both modes`);
const code = await play(codeModel(), 'code');
const direct = await play(directModel(), 'direct');

const names = (answer: string): string[] =>
  [...answer.matchAll(/- ([^(]+) \(/g)].map((m) => m[1]!.trim()).sort();
const directNames = (direct.answer.split(': ')[1] ?? '').split(', ').filter(Boolean).sort();
if (JSON.stringify(names(code.answer)) !== JSON.stringify(directNames)) {
  console.log(
    `  the modes disagree: code ${JSON.stringify(names(code.answer))} vs direct ${JSON.stringify(directNames)}`,
  );
  process.exitCode = 1;
}
const scriptBytes = code.steps
  .flatMap((s) => s.executions)
  .reduce((n, e) => n + e.result.stats.toolResultBytes, 0);
console.log(
  `  both modes name the same ${directNames.length} members; the script read ${Math.round(scriptBytes / 1024)} KB of tool results in the sandbox`,
);
figure('code mode: tokens in context (3 requests)', code.savings.contextTokens, 'tokens');
figure(
  `direct mode: tokens in context (${direct.steps.length} requests, floor)`,
  direct.savings.contextTokens,
  'tokens',
);
figure('code / direct tokens in context', code.savings.contextTokens / direct.savings.contextTokens, '×', {
  max: 0.05,
  note: '(≥ 95 % fewer)',
});
figure('code mode: its direct-calling estimate', code.savings.directEstimateTokens, 'tokens');
figure(
  'estimate / measured direct mode (a lower bound: ≤ 1)',
  code.savings.directEstimateTokens / direct.savings.contextTokens,
  '×',
  { max: 1 },
);
figure('code mode: run time', code.durationMs, 'ms');
figure('direct mode: run time (token counting of ~500 KB included)', direct.durationMs, 'ms');
finish();
