/**
 * When the launcher must re-execute Node with --no-node-snapshot (src/cli/isolate-host.ts): only
 * when the CLI process may create isolates itself. Real configuration files in temp dirs.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hostHasNoSnapshotFlag, needsNoSnapshotHost } from '../../../src/cli/isolate-host.js';
import { tempDir } from '../../fixtures/temp-dir.js';

function dirWith(files: Record<string, string>): string {
  const dir = tempDir('codecall-isolate-host-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

describe('needsNoSnapshotHost', () => {
  it('process mode, explicit or by default, and help run in the launcher itself', () => {
    const dir = dirWith({ 'codecall.json': '{"mcpServers": {}, "sandbox": {"mode": "process"}}' });
    expect(needsNoSnapshotHost(['exec', 'x.js'], dir)).toBe(false);
    expect(needsNoSnapshotHost(['serve'], dirWith({ 'codecall.json': '{"mcpServers": {}}' }))).toBe(false);
    expect(needsNoSnapshotHost(['exec', 'x.js'], dirWith({}))).toBe(false);
    expect(needsNoSnapshotHost(['--help'], dir)).toBe(false);
  });

  it('in-process mode re-executes, found as loadConfig finds the file (--config, codecall.json, .mcp.json)', () => {
    const inProcess = '{"mcpServers": {}, "sandbox": {"mode": "in-process"}}';
    expect(needsNoSnapshotHost(['exec', 'x.js'], dirWith({ 'codecall.json': inProcess }))).toBe(true);
    expect(needsNoSnapshotHost(['run', 'task'], dirWith({ '.mcp.json': inProcess }))).toBe(true);
    // codecall.json wins over .mcp.json, as in loadConfig.
    const both = dirWith({ 'codecall.json': '{"mcpServers": {}}', '.mcp.json': inProcess });
    expect(needsNoSnapshotHost(['exec', 'x.js'], both)).toBe(false);
    const elsewhere = dirWith({ 'other.json': `// comments allowed\n${inProcess}` });
    expect(needsNoSnapshotHost(['exec', 'x.js', '--config', 'other.json'], elsewhere)).toBe(true);
    expect(needsNoSnapshotHost(['serve', '--config=other.json'], elsewhere)).toBe(true);
    expect(needsNoSnapshotHost(['exec', '--help'], elsewhere)).toBe(false);
  });

  it('a mode only the full loader can judge (${VAR}) re-executes; the jobs worker always does', () => {
    expect(
      needsNoSnapshotHost(['exec', 'x.js'], dirWith({ 'codecall.json': '{"sandbox": {"mode": "${MODE}"}}' })),
    ).toBe(true);
    expect(needsNoSnapshotHost(['worker'], dirWith({}))).toBe(true);
  });
});

describe('hostHasNoSnapshotFlag', () => {
  it('reads the command line and NODE_OPTIONS', () => {
    expect(hostHasNoSnapshotFlag(['--no-node-snapshot'], {})).toBe(true);
    expect(hostHasNoSnapshotFlag([], { NODE_OPTIONS: '--max-old-space-size=100 --no-node-snapshot' })).toBe(
      true,
    );
    expect(hostHasNoSnapshotFlag(['--expose-gc'], { NODE_OPTIONS: '--no-warnings' })).toBe(false);
  });
});
