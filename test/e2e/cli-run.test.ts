/**
 * `codecall run` as a user runs it: the real bin, the example expense server over stdio, the
 * offline demo model; exit codes, progress on stderr, the answer on stdout, --json, and Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createExpenseData, overBudgetMembers } from '../../src/testing/servers/index.js';
import { REPO_ROOT, tempRoot } from './temp-root.js';

// Commands run from a temp copy of the root: the usage history they record next to
// examples/codecall.json stays out of the work tree.
const temp = tempRoot();
afterAll(() => temp[Symbol.dispose]());
const ROOT = temp.root;
const BIN = join(REPO_ROOT, 'bin', 'codecall.js');
const TASK = 'Which team members exceeded their Q3 travel budget?';
const expected = overBudgetMembers(createExpenseData(), 'Q3', 'travel');

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function codecall(args: string[], options: { onStart?: (kill: () => void) => void } = {}): Promise<Outcome> {
  const env = { ...process.env };
  delete env.CODECALL_MODEL;
  delete env.ANTHROPIC_API_KEY;
  delete env.OPENAI_API_KEY;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: 'pipe', env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    options.onStart?.(() => child.kill('SIGINT'));
    child.on('error', reject);
    child.on('close', (code, signal) => resolvePromise({ code, signal, stdout, stderr }));
    child.stdin.end();
  });
}

describe('codecall run', () => {
  it('--model demo answers offline with progress and the savings line', async () => {
    const result = await codecall(['run', TASK, '--model', 'demo', '--config', 'examples/codecall.json']);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^Scanned 2400 line items/);
    expect(lines[1]).toBe(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
    expect(new Set(lines.slice(2).map((l) => l.slice(2, l.indexOf(' (', 2))))).toEqual(
      new Set(expected.map((e) => e.member.name)),
    );
    expect(result.stderr).toMatch(/^codecall run · demo:expense-demo · code mode · 2 tools offered$/m);
    expect(result.stderr).toMatch(/^step 1 · search_tools · \d+\.\d s$/m);
    expect(result.stderr).toMatch(/^step 2 · execute_code · \d+ tool calls · \d+\.\d s$/m);
    expect(result.stderr).toMatch(/^step 3 · answer · \d+\.\d s$/m);
    const summary =
      /^tokens: ([\d,]+) in context; kept out: ([\d,]+) of tool results \(([\d,]+) bytes\), ([\d,]+) of tool definitions · 3 steps · \d+\.\d s$/m.exec(
        result.stderr,
      );
    expect(summary).not.toBeNull();
    const [inContext, keptOut, bytes] = [summary![1]!, summary![2]!, summary![3]!].map((n) =>
      Number(n.replace(/,/g, '')),
    );
    expect(inContext).toBeLessThan(keptOut!);
    expect(bytes).toBeGreaterThan(400_000);
  });

  it('--json prints the full run result', async () => {
    const result = await codecall([
      'run',
      TASK,
      '--model=demo',
      '--config',
      'examples/codecall.json',
      '--json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const run = JSON.parse(result.stdout) as {
      answer: string;
      mode: string;
      steps: {
        toolCalls: { kind: string }[];
        executions: { result: { status: string; stats: { toolResultBytes: number } } }[];
      }[];
      savings: { contextTokens: number; toolResultTokensKeptOut: number; toolResultBytesKeptOut: number };
      toolSequences: string[][];
    };
    expect(run.mode).toBe('code');
    expect(run.answer).toMatch(/exceeded their Q3 travel budget/);
    expect(run.steps.map((s) => s.toolCalls.map((c) => c.kind))).toEqual([
      ['search_tools'],
      ['execute_code'],
      [],
    ]);
    expect(run.steps[1]!.executions[0]!.result.status).toBe('ok');
    expect(run.savings.contextTokens).toBeLessThan(run.savings.toolResultTokensKeptOut);
    expect(run.savings.toolResultBytesKeptOut).toBe(
      run.steps[1]!.executions[0]!.result.stats.toolResultBytes,
    );
    expect(run.toolSequences[0]![0]).toBe('expenses.get_team_members');
  });

  it('stops at --max-steps with exit 1, naming the option, and still prints the summary', async () => {
    const result = await codecall([
      'run',
      TASK,
      '--model',
      'demo',
      '--config',
      'examples/codecall.json',
      '--max-steps',
      '1',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/did not finish within 1 steps/);
    expect(result.stderr).toMatch(/--max-steps/);
    expect(result.stderr).toMatch(/^tokens: .* · 1 step · /m);
  });

  it('without a model, exits 2 and says how to choose one', async () => {
    const result = await codecall(['run', TASK, '--config', 'examples/codecall.json']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/No model chosen/);
    expect(result.stderr).toMatch(/--model demo/);
  });

  it('rejects bad usage with exit 2', async () => {
    for (const args of [
      ['run'],
      ['run', TASK, '--mode', 'chat'],
      ['run', TASK, '--max-steps', 'ten'],
      ['run', TASK, '--bogus'],
    ]) {
      const result = await codecall(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/Usage: codecall run/);
    }
  });

  it('--mode direct --model demo answers the same question with filtered direct calls', async () => {
    const result = await codecall([
      'run',
      TASK,
      '--model',
      'demo',
      '--mode',
      'direct',
      '--config',
      'examples/codecall.json',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe(`${expected.length} of 20 team members exceeded their Q3 travel budget:`);
    expect(new Set(lines.slice(1).map((l) => l.slice(2, l.indexOf(' (', 2))))).toEqual(
      new Set(expected.map((e) => e.member.name)),
    );
    expect(result.stderr).toMatch(/^codecall run · demo:expense-demo · direct mode · \d+ tools offered$/m);
    expect(result.stderr).toMatch(/^step 1 · expenses__get_team_members · 1 tool call · /m);
    expect(result.stderr).toMatch(
      /^step 2 · expenses__get_budget_by_level ×\d, expenses__get_expenses ×20 · \d+ tool calls · /m,
    );
    expect(result.stderr).toMatch(/^tokens: [\d,]+ in context \(direct tool calling\)/m);
  });

  it('the demo model refuses any other task plainly, with exit 1', async () => {
    const result = await codecall([
      'run',
      'What is the weather in Oslo?',
      '--model',
      'demo',
      '--config',
      'examples/codecall.json',
    ]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^codecall run: The demo model cannot answer "What is the weather in Oslo\?"\. The demo model is a scripted stand-in, not AI: it only knows the task/m,
    );
  });

  it('Ctrl-C while the model request is in flight cancels the run: exit 130, "interrupted by SIGINT", no hang', async () => {
    let kill: (() => void) | undefined;
    let sent = false;
    const hanging: Server = createServer(() => {
      // The request arrived: the model call is in flight. Never answers.
      sent = true;
      kill?.();
    });
    await new Promise<void>((r) => hanging.listen(0, '127.0.0.1', r));
    const port = (hanging.address() as AddressInfo).port;
    try {
      const result = await codecall(
        [
          'run',
          TASK,
          '--model',
          'openai:local',
          '--base-url',
          `http://127.0.0.1:${port}/v1`,
          '--config',
          'examples/codecall.json',
        ],
        { onStart: (killChild) => (kill = killChild) },
      );
      expect(sent).toBe(true);
      expect(result.code).toBe(130);
      expect(result.stderr).toMatch(/codecall run: cancelled\./);
      expect(result.stderr).toMatch(
        /^codecall run: interrupted by SIGINT; stopped the run and closed the MCP servers and sandboxes\.$/m,
      );
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((r) => hanging.close(() => r()));
    }
  });

  it("prints the model's answer with control sequences shown, not sent; --json keeps them exact", async () => {
    const HOSTILE = '\u001b]52;c;cHduZWQ=\u0007\u001b]0;pwned\u0007\u001b[2J\u009b31m';
    const answer = `Done ${HOSTILE} ok`;
    // A loopback OpenAI Chat Completions server whose model answers at once with hostile text.
    const model: Server = createServer((request, response) => {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({
            id: 'chatcmpl-1',
            object: 'chat.completion',
            created: 0,
            model: 'local',
            choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: answer } }],
            usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
          }),
        );
      });
    });
    await new Promise<void>((r) => model.listen(0, '127.0.0.1', r));
    const port = (model.address() as AddressInfo).port;
    const args = ['run', TASK, '--model', 'openai:local', '--base-url', `http://127.0.0.1:${port}/v1`];
    try {
      const plain = await codecall([...args, '--config', 'examples/codecall.json']);
      expect(plain.code, plain.stderr).toBe(0);
      expect(plain.stdout).toBe('Done ␛]52;c;cHduZWQ=␇␛]0;pwned␇␛[2J\\u009b31m ok\n');
      const json = await codecall([...args, '--config', 'examples/codecall.json', '--json']);
      expect(json.code, json.stderr).toBe(0);
      expect((JSON.parse(json.stdout) as { answer: string }).answer).toBe(answer);
    } finally {
      model.closeAllConnections();
      await new Promise<void>((r) => model.close(() => r()));
    }
  });
});
