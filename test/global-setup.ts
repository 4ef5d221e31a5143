/**
 * @module
 * Builds dist/ once before the suite, so tests that spawn the `codecall` bin or worker
 * processes run the code under test, not a stale build.
 */
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync(process.execPath, ['scripts/build.mjs'], {
    stdio: 'inherit',
    env: { ...process.env, CODECALL_BUILD_LENIENT: '1' },
  });
}
