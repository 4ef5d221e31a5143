/**
 * @module
 * `npm run eval-search`: name, summary and usage text (a developer tool of this repository, not
 * part of the `codecall` command line).
 */
import type { CommandHelp } from '../../src/cli/command.js';

/** `npm run eval-search -- --help`. */
export const evalSearchHelp: CommandHelp = {
  name: 'eval-search',
  summary: 'Measure tool search (Recall, NDCG, completeness @k) with and without the tool graph',
  usage: `Usage: npm run eval-search -- --tools tools.jsonl (--test queries.jsonl | --train chains.jsonl --folds N) [options]
       npm run eval-search -- --dataset ultratool|toolbench [options]

Measures tool search on labelled data: Recall@k, NDCG@k and completeness@k (all of a query's
tools in the top k), for the lexical ranking (BM25F, with RM3 unless --expansion-docs 0), plus
the tool graph, and plus the graph and query feedback (what past queries led to), side by side.

Data (JSON Lines):
  tools.jsonl     one tool a line: { "name", "description", "server"?, "inputSchema"?, "outputSchema"? }
  queries.jsonl   one query a line: { "id", "query", "tools": [tool names in call order] }

Options:
  --dataset <name>       a development set of the data folder: <data>/<name>/tools.jsonl, and
                         dev.jsonl as --test and --train (or train.jsonl as --train), 5 folds
                         unless --folds says otherwise
  --data-dir <path>      the data folder (default: $CODECALL_DATA_DIR, else ../shared/data
                         next to the codecall package)
  --tools <path>         the catalog (required without --dataset)
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
  --edge-discount <x>
  --inferred-edge-share <x>
  --feedback-weight <x>
  --lexical-guard <n>
  --stemming <s>         light (default), porter or none
  --verb-normalization   map create/make/generate, get/fetch/list/show/retrieve, delete/remove
                         onto one term each, in the index and the queries
  --expansion-docs <n>   RM3 pseudo-relevance feedback: top hits read (default 3; 0 = off)
  --expansion-terms <n>  RM3: terms added (default 10)
  --expansion-weight <x> RM3: weight of the added terms against the query (default 0.2)
  --expansion-when <p>   when RM3 runs: selective (default: queries without learned feedback
                         whose first pass is not flat), no-feedback, cold-start, always
  --expansion-flat-share <x>  selective: a first pass is flat when its 10th hit scores at
                         least this share of the best (default 0.5)
  --expansion-rerank-docs <n>  RM3: best first-pass hits re-scored (default 100)
  --field-weights <list> BM25F weights, e.g. name=3,server=2,description=1,parameterNames=1,
                         parameterDescriptions=0.5 (unnamed fields keep their default)
  --learn-field-weights  learn BM25F field weights per fold by grid search on the fold's
                         training queries (BM25 NDCG at the first cut-off); prints them
  --cold-start           measure the ranking a fresh catalog gets (no graph, no query
                         feedback) against BM25F with RM3 off, per fold: NDCG@k of all queries,
                         completeness@k of those that need several tools
  --embeddings-onnx <path>  measure fused ranking (searchAsync) against the ranking it fuses,
                         per fold, at cold start and with the other folds' usage, with a
                         sentence-embedding model on disk (model.onnx, or its folder), as
                         search.embeddings.onnx runs it
  --embeddings-tokenizer <path>  its tokenizer.json (default: beside the model)
  --embeddings-pooling <p>  mean (default) or cls
  --embeddings-base-url <url>  instead, an OpenAI-compatible /v1/embeddings API (needs
                         --embeddings-model; key from $CODECALL_EMBEDDINGS_API_KEY)
  --embeddings-model <name>
  --embedding-weights <list>  embedding weights to measure (default 0.1), e.g. 0.05,0.25,1
  --embedding-guards <list>   hits of the ranking kept in place (default 7), e.g. 0,3,5
  --embedding-flat-shares <list>  fuse a query only when its ranking's 10th hit scores at
                         least this share of the best (default 0.75; 0 = every query),
                         e.g. 0,0.7,0.75; prints the variant this data set would choose

Examples:
  npm run eval-search -- --dataset ultratool
  npm run eval-search -- --dataset toolbench --stemming porter
  npm run eval-search -- --dataset toolbench --cold-start --expansion-when no-feedback
  npm run eval-search -- --tools tools.jsonl --test queries.jsonl --train chains.jsonl
  npm run eval-search -- --dataset toolbench --embeddings-onnx models/glove --embedding-weights 0.05,1
  node scripts/eval-search/word-vectors-to-onnx.ts glove.6B.100d.txt models/glove --remove-components 2 --sif 1e-3
`,
};
