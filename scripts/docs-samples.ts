// Sample output in the docs, from a real run of today's code: `npm run docs:samples` (after
// `npm run build`) runs the Quick start command and the `codecall exec` example, and rewrites
//   - the blocks between `<!-- sample: run-demo -->` and `<!-- /sample -->` in README.md and
//     docs/agent.md (what `codecall run … --model demo` prints, stdout and stderr as a terminal
//     shows them);
//   - the byte counts of `codecall exec examples/scripts/over-budget.ts` quoted in README.md and
//     docs/configuration.md.
// test/e2e/docs-samples.test.ts runs the same commands and fails when the docs differ (times
// aside), so the samples cannot go stale. Runs under plain Node (type stripping): node: imports only.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));
export const TASK = 'Which team members exceeded their Q3 travel budget?';
/** Docs that carry the `run-demo` sample block. */
export const RUN_SAMPLE_DOCS = ['README.md', 'docs/agent.md'];
const SAMPLE = /(<!-- sample: run-demo -->\n+```text\n)([\s\S]*?)(```\n+<!-- \/sample -->)/g;

export interface Samples {
  /** What `codecall run "<task>" --model demo --config examples/codecall.json` prints (stderr and stdout, in order). */
  run: string;
  /** `stats` of `codecall exec examples/scripts/over-budget.ts --json`. */
  exec: { toolResultBytes: number; stdoutBytes: number };
}

/**
 * Runs both commands as a fresh checkout would (a copy of examples/codecall.json in a temp
 * directory, so no learned history from earlier runs changes the search results, and nothing is
 * written into the work tree).
 */
export function collectSamples(): Samples {
  const dir = mkdtempSync(join(tmpdir(), 'codecall-samples-'));
  try {
    const config = JSON.parse(readFileSync(join(ROOT, 'examples', 'codecall.json'), 'utf8')) as {
      mcpServers: { expenses: { args: string[] } };
    };
    config.mcpServers.expenses.args = [join(ROOT, 'examples', 'expense-server', 'server.mjs')];
    const configFile = join(dir, 'codecall.json');
    writeFileSync(configFile, JSON.stringify(config));
    const bin = join(ROOT, 'bin', 'codecall.js');
    // One file for stdout and stderr: the order a terminal shows.
    const outFile = join(dir, 'out.txt');
    const fd = openSync(outFile, 'w');
    try {
      execFileSync(process.execPath, [bin, 'run', TASK, '--model', 'demo', '--config', configFile], {
        cwd: ROOT,
        stdio: ['ignore', fd, fd],
        timeout: 120_000,
      });
    } finally {
      closeSync(fd);
    }
    const run = readFileSync(outFile, 'utf8');
    const exec = JSON.parse(
      execFileSync(
        process.execPath,
        [bin, 'exec', join(ROOT, 'examples', 'scripts', 'over-budget.ts'), '--config', configFile, '--json'],
        { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
      ),
    ) as { stats: Samples['exec'] };
    return {
      run,
      exec: { toolResultBytes: exec.stats.toolResultBytes, stdoutBytes: exec.stats.stdoutBytes },
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The sample blocks of a doc (their text). */
export function runSamplesIn(doc: string): string[] {
  return [...doc.matchAll(SAMPLE)].map((m) => m[2]!);
}

/** The parts of a run's output that do not change between runs: times become `#.# s`. */
export function stableRunOutput(text: string): string {
  return text.replace(/\b\d+\.\d s\b/g, '#.# s');
}

const commas = (n: number): string => n.toLocaleString('en-US');

/** Byte claims about the exec example, as each doc words them: [pattern, replacement]. */
export function execClaims(exec: Samples['exec']): Record<string, [RegExp, string][]> {
  return {
    'README.md': [
      [
        /shows [\d,]+ bytes of tool results consumed by the script and [\d,]+ bytes printed/,
        `shows ${commas(exec.toolResultBytes)} bytes of tool results consumed by the script and ${commas(exec.stdoutBytes)} bytes printed`,
      ],
    ],
    'docs/configuration.md': [
      [
        /"toolResultBytes": \d+, "stdoutBytes": \d+/,
        `"toolResultBytes": ${exec.toolResultBytes}, "stdoutBytes": ${exec.stdoutBytes}`,
      ],
      [/and prints [\d,]+ bytes\./, `and prints ${commas(exec.stdoutBytes)} bytes.`],
    ],
  };
}

function main(): void {
  const samples = collectSamples();
  for (const doc of RUN_SAMPLE_DOCS) {
    const path = join(ROOT, doc);
    const before = readFileSync(path, 'utf8');
    if (runSamplesIn(before).length === 0) throw new Error(`${doc} has no <!-- sample: run-demo --> block`);
    writeFileSync(
      path,
      before.replace(SAMPLE, (_, open: string, _old: string, close: string) => open + samples.run + close),
    );
  }
  for (const [doc, claims] of Object.entries(execClaims(samples.exec))) {
    const path = join(ROOT, doc);
    let text = readFileSync(path, 'utf8');
    for (const [pattern, replacement] of claims) {
      if (!pattern.test(text)) throw new Error(`${doc}: no text matches ${pattern}`);
      text = text.replace(pattern, replacement);
    }
    writeFileSync(path, text);
  }
  process.stdout.write(
    `docs:samples: updated ${[...new Set([...RUN_SAMPLE_DOCS, ...Object.keys(execClaims(samples.exec))])].join(', ')}\n${samples.run}`,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) main();
