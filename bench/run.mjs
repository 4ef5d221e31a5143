// `npm run bench [-- <name-filter>]`: bundles each bench/*.bench.ts with esbuild and runs it in
// its own `node --no-node-snapshot` process, one after another. Each bench prints its figures
// as ratios against a floor it measures in the same run, and a PASS/FAIL per target; a bench
// that cannot run (missing data or build) prints SKIP and is tallied apart, never as met.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { tallyBenches } from './tally.mjs';
import { writeFileAtomically } from './write-bundle.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const filter = process.argv[2];
const out = join(root, '.bench-out');
mkdirSync(out, { recursive: true });
const all = readdirSync(join(root, 'bench')).filter((f) => f.endsWith('.bench.ts'));
// A bench named exactly (`data` or `data.bench.ts`) runs alone; otherwise the filter is a substring.
const exact = all.filter((f) => f === filter || f === `${filter}.bench.ts`);
const benches = (exact.length > 0 ? exact : all.filter((f) => !filter || f.includes(filter))).sort();
if (benches.length === 0) {
  console.error(`bench: nothing matches "${filter}"`);
  process.exit(2);
}
const results = [];
for (const file of benches) {
  const outfile = join(out, file.replace(/\.ts$/, '.mjs'));
  const bundle = await build({
    entryPoints: [join(root, 'bench', file)],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    packages: 'external',
    sourcemap: 'inline',
    logLevel: 'warning',
    write: false,
  });
  for (const output of bundle.outputFiles) writeFileAtomically(output.path, output.contents);
  console.log(`\n=== ${file} ===`);
  const result = spawnSync(process.execPath, ['--no-node-snapshot', '--expose-gc', outfile], {
    cwd: root,
    stdio: 'inherit',
  });
  results.push({ file, status: result.status });
}
const tally = tallyBenches(results);
console.log(`\n${tally.line}`);
process.exit(tally.exitCode);
