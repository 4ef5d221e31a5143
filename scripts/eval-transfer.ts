// `node scripts/eval-transfer.ts`: the part-2 experiments of issue 33 (see
// scripts/eval-search/transfer.ts and docs/search.md), a developer tool of this repository.
// Runs the TypeScript sources under plain Node (type stripping): a resolve hook maps the
// sources' `.js` import specifiers to their `.ts` files, so no build is needed.
import './register-ts-sources.mjs';

await import('./eval-search/transfer.js');
