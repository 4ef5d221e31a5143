import { defineConfig } from 'vitest/config';
import { exitUnlessSupportedNode } from './bin/check-node.js';

// Before anything else: on an older Node, vitest itself fails with an obscure error.
exitUnlessSupportedNode('The codecall test suite');

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    execArgv: ['--no-node-snapshot'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
  },
});
