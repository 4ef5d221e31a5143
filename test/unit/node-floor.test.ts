/**
 * The Node floor: one range, in package.json "engines" and in the check that bin/codecall.js
 * and the test setup run before anything that needs a newer Node; an older Node gets a message
 * naming the version and the fix (run for real when an old `node` is on this machine).
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { NODE_ENGINES, supportsNode, unsupportedNodeMessage } from '../../bin/check-node.js';

const ROOT = resolve(import.meta.dirname, '../..');
/** A Node older than the floor, where one is installed (CI machines ship Node 20). */
const OLD_NODE = ['/usr/bin/node', '/usr/local/bin/node'].find((path) => {
  try {
    return !supportsNode(execFileSync(path, ['--version'], { encoding: 'utf8' }).trim());
  } catch {
    return false;
  }
});

describe('node floor', () => {
  it('is the range package.json declares', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe(NODE_ENGINES);
  });

  it('accepts 22.18+, 23.6+ and later majors; refuses what lacks unflagged node:sqlite or type stripping', () => {
    const verdicts = [
      '20.20.2',
      '22.12.0',
      '22.13.0',
      '22.17.1',
      '22.18.0',
      '23.5.0',
      '23.6.0',
      'v24.1.0',
      '26.0.0',
    ].map((v) => `${v} ${supportsNode(v)}`);
    expect(verdicts).toEqual([
      '20.20.2 false',
      '22.12.0 false',
      '22.13.0 false',
      '22.17.1 false',
      '22.18.0 true',
      '23.5.0 false',
      '23.6.0 true',
      'v24.1.0 true',
      '26.0.0 true',
    ]);
    expect(unsupportedNodeMessage('v20.20.2', 'codecall')).toMatch(
      /^codecall needs Node\.js \^22\.18\.0 \|\| >=23\.6\.0 \(22\.18 or newer\); this is v20\.20\.2\.\n/,
    );
  });

  it.runIf(OLD_NODE !== undefined)(
    'an old node gets the message from the bin and from the test setup, exit 2',
    async () => {
      const run = (args: string[]) =>
        promisify(execFile)(OLD_NODE!, args, { cwd: ROOT, timeout: 60_000, killSignal: 'SIGKILL' }).then(
          () => ({ code: 0, stderr: '' }),
          (error: { code: number; stderr: string }) => error,
        );
      const { stdout: version } = await promisify(execFile)(OLD_NODE!, ['--version']);
      const bin = await run([join(ROOT, 'bin', 'codecall.js'), '--help']);
      expect(bin.code).toBe(2);
      expect(bin.stderr).toBe(unsupportedNodeMessage(version.trim(), 'codecall'));
      const tests = await run([
        join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        'test/unit/cli-main.test.ts',
      ]);
      expect(tests.code).toBe(2);
      expect(tests.stderr).toBe(unsupportedNodeMessage(version.trim(), 'The codecall test suite'));
    },
  );
});
