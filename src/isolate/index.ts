/**
 * @module
 * The sandbox, host side: {@link SandboxPool} (isolate pool, process supervision, limits,
 * tool-call bridge, output capture), limit resolution, and the one renderer of results for the
 * model. Curated exports only.
 */
export { formatResultForModel } from './format-result.js';
export { resolveSandboxLimits } from './limits.js';
export type { SandboxLimits } from './limits.js';
export { SandboxPool } from './sandbox-pool.js';
export type { UnknownToolResolver } from './run-controller.js';
export type {
  SandboxMode,
  SandboxPoolOptions,
  SandboxRunOptions,
  SandboxWorkerEvent,
} from './sandbox-pool.js';
