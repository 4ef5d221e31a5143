/**
 * Direct tool names are provider-safe, unique, stable and never a meta-tool's; results are cut
 * to a byte bound with a marker.
 */
import { describe, expect, it } from 'vitest';
import { assignDirectNames, directToolDefinition } from '../../../src/meta/direct-tools.js';
import { cutToBytes } from '../../../src/meta/cut-to-bytes.js';
import type { CatalogTool } from '../../../src/tools/index.js';

function tool(server: string, name: string, namespace = server, member = name): CatalogTool {
  return {
    name: `${server}.${name}`,
    server,
    tool: name,
    namespace,
    member,
    description: `${name} of ${server}`,
    inputSchema: { type: 'object' },
    allowedCallers: ['direct', 'code_execution'],
    allowedCallersSource: 'default',
    deferLoading: true,
    timeoutMs: 1_000,
  };
}

describe('assignDirectNames', () => {
  it('names tools <namespace>__<member>, safe for Anthropic and OpenAI', () => {
    const names = assignDirectNames([
      tool('expenses', 'get_expenses'),
      tool('my-srv', 'do.it', 'my_srv', 'do_it'),
    ]);
    expect(names.get('expenses.get_expenses')).toBe('expenses__get_expenses');
    expect(names.get('my-srv.do.it')).toBe('my_srv__do_it');
    for (const name of names.values()) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
  });

  it('keeps names unique and at most 64 characters, and never takes a meta-tool name', () => {
    const long = 'x'.repeat(80);
    const names = assignDirectNames([
      tool('a', `${long}1`, 'a', `${long}1`),
      tool('a', `${long}2`, 'a', `${long}2`),
      tool('search', 'tools', 'search', 'tools'),
    ]);
    const values = [...names.values()];
    expect(new Set(values).size).toBe(3);
    for (const name of values) expect(name.length).toBeLessThanOrEqual(64);
    expect(values).not.toContain('search_tools');
  });

  it('gives a tool the same name whatever order the catalog comes in, even when names collide', () => {
    // Three tools whose provider-safe names collide (`my_srv__do_it`), two that collide after the
    // cut to 64 characters, and one bystander.
    const long = 'y'.repeat(80);
    const tools = [
      tool('my-srv', 'do.it', 'my_srv', 'do_it'),
      tool('my_srv', 'do_it'),
      tool('my.srv', 'do-it', 'my_srv', 'do_it'),
      tool('l', `${long}a`, 'l', `${long}a`),
      tool('l', `${long}b`, 'l', `${long}b`),
      tool('z', 'other'),
    ];
    const first = Object.fromEntries(assignDirectNames(tools));
    expect(new Set(Object.values(first)).size).toBe(tools.length);
    expect(Object.values(first)).toEqual(
      expect.arrayContaining(['my_srv__do_it', 'my_srv__do_it_2', 'my_srv__do_it_3']),
    );
    const orders = [
      [...tools].reverse(),
      [tools[2]!, tools[0]!, tools[4]!, tools[1]!, tools[5]!, tools[3]!],
      [tools[1]!, tools[4]!, tools[2]!, tools[3]!, tools[0]!, tools[5]!],
    ];
    expect(orders.map((order) => Object.fromEntries(assignDirectNames(order)))).toEqual([
      first,
      first,
      first,
    ]);
  });

  it('puts the title in front of the description', () => {
    const definition = directToolDefinition({ ...tool('s', 't'), title: 'Title' }, 's__t');
    expect(definition).toEqual({
      name: 's__t',
      description: 'Title. t of s',
      inputSchema: { type: 'object' },
    });
  });
});

describe('cutToBytes', () => {
  it('leaves short text alone', () => {
    expect(cutToBytes('hello', 10)).toBe('hello');
  });

  it('cuts at a byte bound without splitting a character, and says how to ask for less', () => {
    const cut = cutToBytes('é'.repeat(100), 51);
    const kept = cut.split('\n')[0]!;
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(51);
    expect(kept).toBe('é'.repeat(25));
    expect(cut).toMatch(/this result is 200 bytes; only the first 51 are shown\. Ask for less/);
  });
});
