// `npm run eval-search -- <flags>`: measures tool search on labelled data (Recall@k, NDCG@k,
// completeness@k), a developer tool of this repository (it left the `codecall` command line).
// Runs the TypeScript sources under plain Node (type stripping): a resolve hook maps the
// sources' `.js` import specifiers to their `.ts` files, so no build is needed.
import './register-ts-sources.mjs';

const { runEvalSearch } = await import('./eval-search/command.js');
process.exitCode = await runEvalSearch(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  stdin: process.stdin,
  cwd: process.cwd(),
  env: process.env,
  signal: new AbortController().signal,
});
