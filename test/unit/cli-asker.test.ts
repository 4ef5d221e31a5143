/**
 * The form prompt of `codecall run` / `exec` for what an upstream MCP server asks during a call
 * (elicitation): real readline over streams flagged as TTYs, one form at a time; without a
 * terminal, sampling, or URL mode, a refusal that names what to do; hostile form texts are
 * neutralised and bounded.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createCliAsker } from '../../src/cli/cli-asker.js';
import type { CliIo } from '../../src/cli/command.js';
import { DEFAULT_CLI_INPUT_MAX_FIELDS } from '../../src/config/defaults.js';
import type { UpstreamRequest } from '../../src/tools/index.js';

function terminal(tty = true): { io: CliIo; stdin: PassThrough; written: () => string } {
  const stdin = Object.assign(new PassThrough(), { isTTY: tty });
  const stderr = Object.assign(new PassThrough(), { isTTY: tty });
  let written = '';
  stderr.on('data', (chunk: Buffer) => (written += chunk.toString()));
  const io: CliIo = {
    stdin,
    stdout: new PassThrough(),
    stderr,
    cwd: process.cwd(),
    env: {},
    signal: new AbortController().signal,
  };
  return { io, stdin, written: () => written };
}

function form(message: string, requestedSchema: Record<string, unknown>): UpstreamRequest {
  return { method: 'elicitation/create', params: { message, requestedSchema } };
}

const deployForm = form('Deploy to prod?', {
  type: 'object',
  properties: {
    confirm: { type: 'boolean', title: 'Confirm' },
    replicas: { type: 'integer', title: 'Replicas', default: 2 },
    region: { type: 'string', enum: ['eu-west', 'us-east'] },
    note: { type: 'string', description: 'why' },
  },
  required: ['confirm', 'region'],
});

const context = { tool: 'up.deploy', args: { env: 'prod' } };

describe('createCliAsker at a terminal', () => {
  it('asks each field of the form, with defaults, choices and required fields, and accepts', async () => {
    const { io, stdin, written } = terminal();
    const asker = createCliAsker({ io, command: 'exec' });
    const answer = asker(deployForm, new AbortController().signal, context);
    await expect.poll(written).toContain('codecall exec: an MCP server asks: Deploy to prod?');
    stdin.write('a\n');
    await expect.poll(written).toContain('Confirm (y/n, required): ');
    stdin.write('maybe\n');
    await expect.poll(written).toContain('answer y or n.');
    stdin.write('yes\n');
    await expect.poll(written).toContain('Replicas (integer) [default: 2]: ');
    stdin.write('\n');
    await expect.poll(written).toContain('region (one of: 1) eu-west, 2) us-east, required): ');
    stdin.write('\n');
    await expect.poll(written).toContain('this field is required.');
    stdin.write('2\n');
    await expect.poll(written).toContain('note — why (string): ');
    stdin.write('\n');
    await expect(answer).resolves.toEqual({
      action: 'accept',
      content: { confirm: true, replicas: 2, region: 'us-east' },
    });
  });

  it('declines or cancels as answered, and one form waits for the one before', async () => {
    const { io, stdin, written } = terminal();
    const asker = createCliAsker({ io, command: 'run' });
    const first = asker(deployForm, new AbortController().signal, context);
    const second = asker(
      form('Second?', { type: 'object', properties: {} }),
      new AbortController().signal,
      context,
    );
    await expect.poll(written).toContain('Deploy to prod?');
    expect(written()).not.toContain('Second?');
    stdin.write('d\n');
    await expect(first).resolves.toEqual({ action: 'decline' });
    await expect.poll(written).toContain('Second?');
    stdin.write('whatever\n');
    await expect(second).resolves.toEqual({ action: 'cancel' });
  });

  it('shows hostile texts neutralised and cut, and refuses a form with too many fields', async () => {
    const { io, stdin, written } = terminal();
    const asker = createCliAsker({ io, command: 'exec' });
    const hostile = asker(
      form(`\u001b]0;pwned\u0007Pay \u202eevil${'x'.repeat(3_000)}`, {
        type: 'object',
        properties: { ok: { type: 'boolean', title: 'O\u001b[2Jk' } },
      }),
      new AbortController().signal,
      context,
    );
    await expect.poll(written).toContain('[a]nswer');
    for (const raw of ['\u001b', '\u0007', '\u202e']) expect(written()).not.toContain(raw);
    expect(written()).toContain('\\u001b]0;pwned\\u0007Pay \\u202eevil');
    expect(written()).toContain('(3019 characters)');
    stdin.write('c\n');
    await expect(hostile).resolves.toEqual({ action: 'cancel' });

    const properties = Object.fromEntries(
      Array.from({ length: DEFAULT_CLI_INPUT_MAX_FIELDS + 1 }, (_, i) => [`f${i}`, { type: 'string' }]),
    );
    await expect(
      asker(form('Big?', { type: 'object', properties }), new AbortController().signal, context),
    ).rejects.toThrow(/has 21 fields, more than 20 \(DEFAULT_CLI_INPUT_MAX_FIELDS\)/);
  });

  it('without a terminal, or for sampling and URL mode, refuses with what to do', async () => {
    const { io } = terminal(false);
    const asker = createCliAsker({ io, command: 'exec' });
    await expect(asker(deployForm, new AbortController().signal, context)).rejects.toThrow(
      /codecall exec cannot answer this elicitation\/create request: the server asks "Deploy to prod\?" and there is no terminal to ask \(stdin is not a TTY\); run codecall exec in a terminal/,
    );
    const tty = createCliAsker({ io: terminal().io, command: 'run' });
    await expect(
      tty({ method: 'sampling/createMessage', params: { messages: [] } }, new AbortController().signal),
    ).rejects.toThrow(/no model to sample with/);
    await expect(
      tty(
        { method: 'elicitation/create', params: { mode: 'url', message: 'Log in', url: 'https://x' } },
        new AbortController().signal,
      ),
    ).rejects.toThrow(/asks to open a URL/);
  });

  it('withdraws the form when the call ends (abort)', async () => {
    const { io, written } = terminal();
    const asker = createCliAsker({ io, command: 'exec' });
    const controller = new AbortController();
    const answer = asker(deployForm, controller.signal, context);
    await expect.poll(written).toContain('Deploy to prod?');
    controller.abort(new Error('the call ended'));
    await expect(answer).rejects.toThrow(/the call ended/);
  });
});
