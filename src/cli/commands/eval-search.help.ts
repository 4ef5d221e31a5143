/**
 * @module
 * `codecall eval-search`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall eval-search --help` read only this).
 */
import type { CommandHelp } from '../command.js';

/** `codecall eval-search --help`. */
export const evalSearchHelp: CommandHelp = {
  name: 'eval-search',
  summary: 'Measure tool search (Recall, NDCG, completeness @k) with and without the tool graph',
  usage: `Usage: codecall eval-search --tools tools.jsonl (--test queries.jsonl | --train chains.jsonl --folds N) [options]

Measures tool search on labelled data: Recall@k, NDCG@k and completeness@k (all of a query's
tools in the top k), for BM25 alone, BM25 plus the tool graph, and BM25 plus the graph plus
query feedback (what past queries led to), side by side.

Data (JSON Lines):
  tools.jsonl     one tool a line: { "name", "description", "server"?, "inputSchema"?, "outputSchema"? }
  queries.jsonl   one query a line: { "id", "query", "tools": [tool names in call order] }

Options:
  --tools <path>         the catalog (required)
  --test <path>          queries to evaluate
  --train <path>         call chains the graph learns first (query lines; only "tools" is read)
  --train-queries <path> queries with their tools that query feedback and the graph learn first
  --folds <n>            k-fold cross-validation over the test queries (or over --train when
                         --test is absent): each fold's graph and feedback also learn the other
                         folds' queries and chains
  --k <list>             cut-offs, comma-separated (default 5,10)
  --json                 print the result as JSON
  --seed <n>             seed of the fold assignment (default 1)
  --beam-width <n>       ranking options of the graph run (defaults: see docs/search.md)
  --beam-depth <n>
  --graph-weight <x>
  --evidence-prior <x>
  --inferred-edge-share <x>
  --feedback-weight <x>
  --lexical-guard <n>

Examples:
  codecall eval-search --tools ../shared/data/ultratool/tools.jsonl --train ../shared/data/ultratool/train.jsonl --folds 5
  codecall eval-search --tools ../shared/data/toolbench/tools.jsonl --test ../shared/data/toolbench/dev.jsonl
`,
};
