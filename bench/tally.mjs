// The final tally of `npm run bench`: each bench's exit status is met (0), skipped
// (BENCH_SKIP_EXIT_CODE: part of it could not run, e.g. missing data or build) or missed
// (anything else, including a crash). A skipped bench never counts as met.

/** Exit code of a skipped bench; the same value as `BENCH_SKIP_EXIT_CODE` in bench/harness.ts. */
export const BENCH_SKIP_EXIT_CODE = 3;

/**
 * @param {{ file: string, status: number | null }[]} results one per bench, in run order
 * @returns {{ line: string, exitCode: number, met: string[], skipped: string[], missed: string[] }}
 */
export function tallyBenches(results) {
  const met = results.filter((r) => r.status === 0).map((r) => r.file);
  const skipped = results.filter((r) => r.status === BENCH_SKIP_EXIT_CODE).map((r) => r.file);
  const missed = results
    .filter((r) => r.status !== 0 && r.status !== BENCH_SKIP_EXIT_CODE)
    .map((r) => r.file);
  const parts = [`bench: ${met.length} of ${results.length} benches met their targets`];
  if (missed.length > 0) parts.push(`${missed.length} missed (${missed.join(', ')})`);
  if (skipped.length > 0) parts.push(`${skipped.length} SKIP, not met (${skipped.join(', ')})`);
  const exitCode = missed.length > 0 ? 1 : skipped.length > 0 ? BENCH_SKIP_EXIT_CODE : 0;
  return { line: parts.join('; '), exitCode, met, skipped, missed };
}
