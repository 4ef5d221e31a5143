import { describe, expect, it } from 'vitest';
import {
  CatalogLinks,
  describeLink,
  normalizeField,
  schemaProperties,
} from '../../../src/search/catalog-links.js';

describe('CatalogLinks', () => {
  it('links an output field to the tools that take it as input', () => {
    const links = new CatalogLinks();
    links.add({ name: 'users.find', outputSchema: { properties: { userId: { type: 'string' } } } });
    links.add({ name: 'mail.send', inputSchema: { properties: { user_id: {}, body: {} } } });
    expect([...links.successors('users.find').keys()]).toEqual(['mail.send']);
    expect([...links.predecessors('mail.send').keys()]).toEqual(['users.find']);
    links.remove('mail.send');
    expect(links.successors('users.find').size).toBe(0);
  });

  it('reads "returns …" fields from descriptions and mentions of other tools', () => {
    const links = new CatalogLinks();
    links.add({
      name: 'search',
      server: 'bing',
      description: 'Search the web. Returns result_id for each hit.',
    });
    links.add({ name: 'bing.fetch_page', server: 'bing', inputSchema: { properties: { result_id: {} } } });
    links.add({ name: 'bing.list_pages', server: 'bing' });
    links.add({ name: 'notes.save', description: 'Save a note; use the output of bing.list_pages.' });
    expect([...links.successors('search').keys()]).toEqual(['bing.fetch_page']);
    expect([...links.successors('bing.list_pages').keys()]).toEqual(['notes.save']);
    const mention = links.predecessors('notes.save').get('bing.list_pages')!;
    expect(describeLink('bing.list_pages', 'notes.save', mention)).toBe(
      "notes.save's description mentions bing.list_pages",
    );
    const field = links.successors('search').get('bing.fetch_page')!;
    expect(describeLink('search', 'bing.fetch_page', field)).toBe(
      'bing.fetch_page takes "resultid", an output of search',
    );
  });

  it('links a bare-name mention only within one server', () => {
    const links = new CatalogLinks();
    links.add({ name: 'fs.read_file', server: 'fs' });
    links.add({ name: 'editor.open', server: 'editor', description: 'Open what read_file returned.' });
    links.add({ name: 'fs.stat', server: 'fs', description: 'Like read_file but metadata only.' });
    links.add({ name: 'notes.save', server: 'notes', description: 'Save the text of fs.read_file.' });
    expect([...links.successors('fs.read_file').keys()].sort()).toEqual(['fs.stat', 'notes.save']);
    expect([...links.predecessors('editor.open').keys()]).toEqual([]);
  });

  it('ignores generic fields and fields shared by too many tools', () => {
    const links = new CatalogLinks({ maxFanout: 2 });
    links.add({ name: 'a', outputSchema: { properties: { id: {}, path: {} } } });
    for (const n of ['b', 'c', 'd'])
      links.add({ name: n, inputSchema: { properties: { id: {}, path: {} } } });
    expect(links.successors('a').size).toBe(0);
  });
});

describe('schemaProperties', () => {
  it('reads nested properties within bounds and ignores junk', () => {
    expect(schemaProperties({ properties: { a: { description: 'x', properties: { b: {} } } } })).toEqual([
      { name: 'a', description: 'x' },
      { name: 'b', description: '' },
    ]);
    expect(schemaProperties('junk')).toEqual([]);
    expect(schemaProperties({ properties: [] })).toEqual([]);
    const wide = { properties: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`p${i}`, {}])) };
    expect(schemaProperties(wide).length).toBe(200);
  });

  it('normalises field spellings', () => {
    expect(normalizeField('User-ID')).toBe(normalizeField('user_id'));
  });
});
