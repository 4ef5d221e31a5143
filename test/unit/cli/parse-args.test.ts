/**
 * The CLI's one argument parser (`parseCommandArgs`, over `node:util` `parseArgs`) and the
 * commands that read their arguments with it: errors name the flag.
 */
import { describe, expect, it } from 'vitest';
import { parseExecArgs } from '../../../src/cli/commands/exec.js';
import { parseRunArgs } from '../../../src/cli/commands/run.js';
import { parseToolsArgs } from '../../../src/cli/commands/tools.js';
import { parseCommandArgs, UsageError } from '../../../src/cli/command.js';

describe('parseCommandArgs', () => {
  const options = { config: { type: 'string' }, json: { type: 'boolean' } } as const;
  const parse = (args: string[]) => parseCommandArgs({ args, options, allowPositionals: false });

  it('reads --flag value, --flag=value and booleans', () => {
    expect(parse(['--config', 'a.json', '--json']).values).toEqual({ config: 'a.json', json: true });
    expect(parse(['--config=b.json']).values).toEqual({ config: 'b.json' });
  });

  it('turns every parse error into a UsageError that names the flag and the fix', () => {
    const cases: [string[], string][] = [
      [['--confg', 'x'], 'unknown option "--confg". Did you mean --config?'],
      [['--verbose'], 'unknown option "--verbose". The options are below.'],
      [['--config'], '--config needs a value: --config <value>.'],
      [['--config', '--json'], '--config needs a value: --config <value>.'],
      [['--json=yes'], '--json takes no value: give --json alone.'],
      [['stray'], 'unknown argument "stray".'],
    ];
    for (const [args, message] of cases) {
      let thrown: unknown;
      try {
        parse(args);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, args.join(' ')).toBeInstanceOf(UsageError);
      expect((thrown as Error).message).toBe(message);
    }
  });
});

describe('commands read their arguments with it', () => {
  it('exec: one script (or - for stdin), --config, --json', () => {
    expect(parseExecArgs(['-', '--json', '--config=c.json'])).toEqual({
      file: '-',
      json: true,
      quiet: false,
      config: 'c.json',
      approve: [],
      repeatInDoubt: false,
    });
    expect(parseExecArgs(['s.ts', '--approve', 'a.b', '--resume', 'j.jsonl', '--repeat-in-doubt'])).toEqual({
      file: 's.ts',
      json: false,
      quiet: false,
      approve: ['a.b'],
      resume: 'j.jsonl',
      repeatInDoubt: true,
    });
    expect(() => parseExecArgs(['a.js', 'b.js'])).toThrow('one script at a time; got "a.js" and "b.js".');
    expect(() => parseExecArgs(['a.js', '--config'])).toThrow('--config needs a value: --config <value>.');
    expect(() => parseExecArgs(['--jsn', 'a.js'])).toThrow('unknown option "--jsn". Did you mean --json?');
    expect(() => parseExecArgs([])).toThrow(/give a script file/);
  });

  it('tools: no positionals; --json and --declarations exclude each other', () => {
    expect(parseToolsArgs(['--declarations', '--config', 'x.json'])).toEqual({
      json: false,
      declarations: true,
      config: 'x.json',
    });
    expect(() => parseToolsArgs(['stray'])).toThrow('unknown argument "stray".');
    expect(() => parseToolsArgs(['--json', '--declarations'])).toThrow(/either --json or --declarations/);
  });

  it('run: the words are the task; --mode, --max-steps and --base-url are checked', () => {
    expect(
      parseRunArgs(['find', '--max-steps=3', 'it', '--base-url', 'http://x', '--mode', 'direct']),
    ).toEqual({
      task: 'find it',
      maxSteps: 3,
      baseURL: 'http://x',
      mode: 'direct',
      json: false,
      approve: [],
    });
    expect(() => parseRunArgs(['task', '--mode', 'fast'])).toThrow('--mode is code or direct, not "fast".');
    expect(() => parseRunArgs(['task', '--max-steps', '0'])).toThrow(/--max-steps needs a positive integer/);
    expect(parseRunArgs(['task', '--max-output-tokens', '1024']).maxOutputTokens).toBe(1024);
    expect(() => parseRunArgs(['task', '--max-output-tokens', '1.5'])).toThrow(
      /--max-output-tokens needs a positive integer, not "1.5"/,
    );
    expect(() => parseRunArgs(['task', '--model'])).toThrow('--model needs a value: --model <value>.');
  });
});
