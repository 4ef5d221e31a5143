/** `codecall exec`'s progress lines: format, throttling, and the --quiet flag. */
import { describe, expect, it } from 'vitest';
import { parseExecArgs } from '../../../src/cli/commands/exec.js';
import { execHelp } from '../../../src/cli/commands/exec.help.js';
import { ExecProgress, formatElapsed } from '../../../src/cli/exec-progress.js';

describe('exec progress', () => {
  it('formats elapsed time in ms, s and min', () => {
    expect(formatElapsed(850.4)).toBe('850 ms');
    expect(formatElapsed(2_149)).toBe('2.1 s');
    expect(formatElapsed(185_000)).toBe('3 min 05 s');
  });

  it('writes one line per call, and counts calls within the interval into the next line', () => {
    let now = 1_000;
    const lines: string[] = [];
    const progress = new ExecProgress({ write: (line) => lines.push(line), now: () => now, intervalMs: 250 });
    now += 120;
    progress.onCall({ name: 'a.first', ok: true });
    now += 10;
    progress.onCall({ name: 'a.second', ok: false });
    now += 10;
    progress.onCall({ name: 'a.third', ok: true });
    expect(lines).toEqual(['codecall exec: ✓ a.first · 120 ms\n']);
    now += 300;
    progress.onCall({ name: 'a.fourth', ok: true });
    expect(lines.at(-1)).toBe('codecall exec: ✓ a.fourth (+2 more calls, 1 failed) · 440 ms\n');
    now += 5;
    progress.onCall({ name: 'a\u001b[2Jfifth', ok: false });
    progress.flush();
    // Control characters in a name are shown, never sent to the terminal.
    expect(lines.at(-1)).toMatch(/^codecall exec: ✗ a.+fifth · 445 ms\n$/);
    expect(lines.at(-1)).not.toContain('\u001b');
    progress.flush();
    expect(lines).toHaveLength(3);
  });

  it('--quiet turns it off and --help documents it', () => {
    expect(parseExecArgs(['s.ts', '--quiet']).quiet).toBe(true);
    expect(parseExecArgs(['s.ts']).quiet).toBe(false);
    expect(execHelp.usage).toContain('--quiet');
    expect(execHelp.usage).toContain('When stderr is a terminal, each tool call that');
  });
});
