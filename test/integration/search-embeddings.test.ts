/**
 * @module
 * Optional embeddings in tool search, over the wire: `createOpenAIEmbedder` against a loopback
 * node:http server speaking OpenAI's `/v1/embeddings` with a deterministic fake embedding (words
 * of one meaning share a dimension), reciprocal-rank fusion with BM25 + graph, the on-disk vector
 * cache, failures, and the rule that without an embedder nothing changes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isCodecallError } from '../../src/errors.js';
import { configFileSchema } from '../../src/config/schema.js';
import { createOpenAIEmbedder } from '../../src/search/openai-embedder.js';
import { openEmbeddings } from '../../src/execute/open-embeddings.js';
import { SqliteEmbeddingCache } from '../../src/store/sqlite-embedding-cache.js';
import { createToolSearch, type SearchableTool } from '../../src/search/tool-search.js';
import { CATALOG } from '../unit/search/catalog.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { parseConfig } from '../../src/config/index.js';
import { CodecallRuntime } from '../../src/execute/index.js';
import { createCodecallServer } from '../../src/server/index.js';
import { createHostileServer, type HostileTool } from '../../src/testing/servers/hostile-server.js';
import { inMemoryTransport } from '../../src/testing/servers/in-memory.js';

const dir = mkdtempSync(join(tmpdir(), 'codecall-embed-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Words of one meaning share a dimension; other words hash into the rest. */
const MEANINGS = [
  ['chart', 'charts', 'plot', 'graph', 'visualize', 'diagram', 'cloud'],
  ['weather', 'forecast', 'rain', 'temperature'],
  ['email', 'mail', 'message', 'send', 'chat'],
  ['file', 'files', 'document', 'disk'],
  ['money', 'expenses', 'expense', 'budget', 'spending', 'sales'],
];
const DIMENSIONS = 32;

function fakeEmbedding(text: string): number[] {
  const vector = new Array<number>(DIMENSIONS).fill(0);
  for (const word of text.toLowerCase().split(/[^a-z]+/)) {
    if (word === '') continue;
    const meaning = MEANINGS.findIndex((words) => words.includes(word));
    if (meaning >= 0) vector[meaning]! += 1;
    else {
      let h = 0;
      for (const c of word) h = (h * 31 + c.charCodeAt(0)) >>> 0;
      vector[MEANINGS.length + (h % (DIMENSIONS - MEANINGS.length))]! += 0.2;
    }
  }
  return vector;
}

type Mode = 'ok' | 'http-500' | 'short' | 'not-json';

/** A loopback `/v1/embeddings` server that records what it was asked. */
class EmbeddingServer {
  readonly inputs: string[] = [];
  readonly requests: Array<{ model: string; authorization: string | undefined }> = [];
  mode: Mode = 'ok';
  readonly #server: Server;
  private constructor(server: Server) {
    this.#server = server;
  }

  static async open(): Promise<EmbeddingServer> {
    const holder: { self?: EmbeddingServer } = {};
    const server = createServer((request, response) => void holder.self!.handle(request, response));
    const self = (holder.self = new EmbeddingServer(server));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return self;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    if (request.url !== '/v1/embeddings' || request.method !== 'POST') {
      response.writeHead(404).end('{"error":"not found"}');
      return;
    }
    const { model, input } = JSON.parse(body) as { model: string; input: string[] };
    this.requests.push({ model, authorization: request.headers.authorization });
    this.inputs.push(...input);
    if (this.mode === 'http-500') {
      response.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"model not loaded"}');
      return;
    }
    if (this.mode === 'not-json') {
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html>proxy login</html>');
      return;
    }
    const items = (this.mode === 'short' ? input.slice(1) : input).map((text, index) => ({
      object: 'embedding',
      index,
      embedding: fakeEmbedding(text),
    }));
    // Out of order, as the API allows: the client must sort by index.
    items.reverse();
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ object: 'list', model, data: items }));
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

let server: EmbeddingServer;
beforeEach(async () => {
  server = await EmbeddingServer.open();
});
afterEach(async () => {
  await server.close();
});

const TOOLS: SearchableTool[] = [
  { name: 'viz.generate_word_cloud_chart', description: 'Word cloud from a text.' },
  { name: 'viz.pick_palette', description: 'Colour palettes.' },
  { name: 'weather.get_forecast', description: 'Forecast for a city.' },
  { name: 'mail.send_email', description: 'Send an email to one recipient.' },
  { name: 'files.read_file', description: 'Read a file from disk.' },
  { name: 'books.get_sales_numbers', description: 'Copies sold of a book by month.' },
];

describe('embeddings fused with BM25 + graph', () => {
  it('finds a tool named in other words than the query, and says why', async () => {
    const embed = createOpenAIEmbedder({ baseUrl: server.baseUrl, model: 'fake-embed', apiKey: 'sk-test' });
    const search = createToolSearch({ tools: TOOLS, embed });
    const query = 'plot a diagram of my book sales';
    // BM25 alone finds the sales numbers but not the chart tool (no shared word).
    const lexical = search.search(query).map((h) => h.name);
    expect(lexical).toContain('books.get_sales_numbers');
    expect(lexical).not.toContain('viz.generate_word_cloud_chart');
    const fused = await search.searchAsync(query, { limit: 3 });
    expect(fused.embeddingError).toBeUndefined();
    const names = fused.hits.map((h) => h.name);
    expect(names).toHaveLength(3);
    // In both lists beats one list (fusion); the chart tool, in the embedding list only, makes the top 3.
    expect(names[0]).toBe('books.get_sales_numbers');
    expect(names).toContain('viz.generate_word_cloud_chart');
    const chart = fused.hits.find((h) => h.name === 'viz.generate_word_cloud_chart')!;
    expect(chart.reasons).toEqual(['close in meaning to the query (embedding rank 1)']);
    const sales = fused.hits.find((h) => h.name === 'books.get_sales_numbers')!;
    expect(sales.reasons[0]).toMatch(/^matches .*'sales'/);
    expect(sales.reasons.at(-1)).toMatch(/^close in meaning to the query \(embedding rank \d\)$/);
    // The wire: the model, the key as a bearer token, every tool once and the query.
    expect(
      server.requests.every((r) => r.model === 'fake-embed' && r.authorization === 'Bearer sk-test'),
    ).toBe(true);
    expect(server.inputs).toHaveLength(TOOLS.length + 1);
    expect(server.inputs.at(-1)).toBe(query);
    // A second query embeds only itself.
    await search.searchAsync('weather tomorrow');
    expect(server.inputs).toHaveLength(TOOLS.length + 2);
  });

  it('keeps exact tool names first and honours embeddingWeight', async () => {
    const embed = createOpenAIEmbedder({ baseUrl: server.baseUrl, model: 'fake-embed' });
    const search = createToolSearch({ tools: TOOLS, embed });
    const exact = await search.searchAsync('files.read_file');
    expect(exact.hits[0]!.name).toBe('files.read_file');
    expect(exact.hits[0]!.reasons[0]).toBe('exact tool name');
    const off = createToolSearch({ tools: TOOLS, embed, embeddingWeight: 0 });
    const query = 'plot a diagram of my book sales';
    expect((await off.searchAsync(query)).hits.map((h) => h.name)).toEqual(
      off.search(query).map((h) => h.name),
    );
  });

  it("keeps the default ranking's best embeddingGuard hits in place; the fusion orders what follows", async () => {
    const embed = createOpenAIEmbedder({ baseUrl: server.baseUrl, model: 'fake-embed' });
    const query = 'plot a diagram of my book sales';
    const lexical = createToolSearch({ tools: TOOLS })
      .search(query)
      .map((h) => h.name);
    expect(lexical[0]).toBe('books.get_sales_numbers');
    expect(lexical).not.toContain('viz.generate_word_cloud_chart');
    // Fused on every query (flat share 0; the default fuses only rankings with no head, below),
    // a loud embedding ranking with no guard puts its own best first…
    const loud = { tools: TOOLS, embed, embeddingWeight: 100, embeddingFlatShare: 0 };
    const open = createToolSearch({ ...loud, embeddingGuard: 0 });
    expect((await open.searchAsync(query)).hits[0]!.name).toBe('viz.generate_word_cloud_chart');
    // …with a guard of 1 (set on the index, or per query) the lexical best keeps its place.
    const guarded = createToolSearch({ ...loud, embeddingGuard: 1 });
    const names = (await guarded.searchAsync(query)).hits.map((h) => h.name);
    expect(names.slice(0, 2)).toEqual(['books.get_sales_numbers', 'viz.generate_word_cloud_chart']);
    expect((await open.searchAsync(query, { embeddingGuard: 1 })).hits.map((h) => h.name)).toEqual(names);
    // The default guard keeps as many lexical hits as there are (here fewer than 7) ahead of the rest.
    const byDefault = (await createToolSearch(loud).searchAsync(query)).hits;
    expect(lexical.length).toBeLessThan(7);
    expect(byDefault.slice(0, lexical.length).map((h) => h.name)).toEqual(lexical);
    expect(byDefault.map((h) => h.name)).toContain('viz.generate_word_cloud_chart');
    await expect(open.searchAsync(query, { embeddingGuard: -1 })).rejects.toThrow(
      /"embeddingGuard" must be an integer from 0 to 50/,
    );
    expect(() => createToolSearch({ tools: TOOLS, embed, embeddingGuard: 1.5 })).toThrow(/embeddingGuard/);
  });

  it('fuses only a ranking with no head; one with a head keeps its order, and the embedding only fills a short page', async () => {
    // Twelve tools match "report" alike; one of them also says "weekly". The chart tool shares no
    // word with the queries, only a meaning ("plot").
    const tools: SearchableTool[] = [
      ...Array.from({ length: 12 }, (_, i) => ({
        name: `desk.task_${String(i + 1).padStart(2, '0')}`,
        description: `Files a report${i === 0 ? ' every weekly cycle' : ''} for desk ${i + 1}.`,
      })),
      { name: 'viz.generate_word_cloud_chart', description: 'Word cloud from a text.' },
    ];
    const embed = createOpenAIEmbedder({ baseUrl: server.baseUrl, model: 'fake-embed' });
    // A loud embedding and no guard: wherever fusion runs, the chart tool comes first.
    const search = createToolSearch({ tools, embed, embeddingWeight: 100, embeddingGuard: 0 });
    const chart = 'viz.generate_word_cloud_chart';

    // No head: the twelve hits tie, the page says nothing about their order; fused.
    const flat = 'report plot';
    expect(search.search(flat).map((h) => h.score)).toEqual(
      new Array(10).fill(search.search(flat)[0]!.score),
    );
    expect((await search.searchAsync(flat)).hits[0]!.name).toBe(chart);

    // A head ("weekly" names one tool): the default ranking, exactly, and the query is not even embedded.
    const headed = 'weekly report plot';
    const before = server.inputs.length;
    expect(await search.searchAsync(headed)).toEqual(search.searchDetailed(headed));
    expect(server.inputs.length).toBe(before);
    // The same query at flat share 0 (per query, or on the index) is fused.
    expect((await search.searchAsync(headed, { embeddingFlatShare: 0 })).hits[0]!.name).toBe(chart);
    const everyQuery = createToolSearch({
      tools,
      embed,
      embeddingWeight: 100,
      embeddingGuard: 0,
      embeddingFlatShare: 0,
    });
    expect((await everyQuery.searchAsync(headed)).hits[0]!.name).toBe(chart);

    // A page longer than the ranking: every default hit in its order, then the embedding's.
    const page = await search.searchAsync(headed, { limit: 20 });
    const lexical = search.searchDetailed(headed, { limit: 20 }).hits.map((h) => h.name);
    expect(lexical).toHaveLength(12);
    expect(page.hits.map((h) => h.name).slice(0, 12)).toEqual(lexical);
    expect(page.hits[12]!.name).toBe(chart);
    expect(page.hits[12]!.reasons).toEqual(['close in meaning to the query (embedding rank 1)']);

    await expect(search.searchAsync(flat, { embeddingFlatShare: 1.5 })).rejects.toThrow(
      /"embeddingFlatShare" must be a number from 0 to 1/,
    );
    expect(() => createToolSearch({ tools, embed, embeddingFlatShare: -0.1 })).toThrow(/embeddingFlatShare/);
  });

  it('without an embedder, searchAsync is searchDetailed exactly; with one, search() is unchanged', async () => {
    const plain = createToolSearch({ tools: CATALOG });
    const withEmbedder = createToolSearch({
      tools: CATALOG,
      embed: createOpenAIEmbedder({ baseUrl: server.baseUrl, model: 'fake-embed' }),
    });
    for (const s of [plain, withEmbedder]) {
      for (let i = 0; i < 5; i++) s.recordSequence(['hr.get_team_members', 'finance.get_expenses']);
      s.recordUsage({ query: 'team spending', tools: ['finance.get_expenses'] });
      s.recordUsage({ query: 'team spending', tools: ['finance.get_expenses'] });
    }
    const queries = ['team spending', 'send a message', 'weather forecast', 'read_file', 'budget of a level'];
    for (const query of queries) {
      expect(await plain.searchAsync(query)).toEqual(plain.searchDetailed(query));
      expect(withEmbedder.searchDetailed(query)).toEqual(plain.searchDetailed(query));
      expect(withEmbedder.search(query, { limit: 3 })).toEqual(plain.search(query, { limit: 3 }));
    }
    expect(server.inputs).toHaveLength(0);
  });
});

describe('the on-disk vector cache', () => {
  it('embeds each tool text once per model, across restarts, and re-embeds only what changed', async () => {
    const path = join(dir, 'vectors.sqlite');
    const embed = createOpenAIEmbedder({ baseUrl: server.baseUrl, model: 'fake-embed' });
    const first = await SqliteEmbeddingCache.open({ path, model: 'fake-embed' });
    await createToolSearch({ tools: TOOLS, embed, embeddingCache: first }).searchAsync('chart');
    expect(server.inputs).toHaveLength(TOOLS.length + 1);
    expect(first.size()).toBe(TOOLS.length);
    await first.close();

    // A restart: the tools come from disk, only the query goes over the wire.
    server.inputs.length = 0;
    const second = await SqliteEmbeddingCache.open({ path, model: 'fake-embed' });
    const changed = TOOLS.map((t) =>
      t.name === 'viz.pick_palette' ? { ...t, description: 'Colour palettes for charts.' } : t,
    );
    const search = createToolSearch({ tools: changed, embed, embeddingCache: second });
    const hits = (await search.searchAsync('chart')).hits.map((h) => h.name);
    expect(server.inputs).toEqual(['viz.pick_palette\nColour palettes for charts.', 'chart']);
    expect(hits.slice(0, 2).sort()).toEqual(['viz.generate_word_cloud_chart', 'viz.pick_palette']);
    await second.close();

    // Another model never reads these vectors.
    server.inputs.length = 0;
    await using other = await SqliteEmbeddingCache.open({ path, model: 'other-model' });
    await createToolSearch({ tools: TOOLS, embed, embeddingCache: other }).searchAsync('chart');
    expect(server.inputs).toHaveLength(TOOLS.length + 1);
  });

  it('stays within maxEntries, forgetting the oldest', async () => {
    await using cache = await SqliteEmbeddingCache.open({
      path: join(dir, 'small.sqlite'),
      model: 'fake-embed',
      maxEntries: 3,
    });
    const embed = createOpenAIEmbedder({ baseUrl: server.baseUrl, model: 'fake-embed' });
    await createToolSearch({ tools: TOOLS, embed, embeddingCache: cache }).searchAsync('chart');
    expect(cache.size()).toBe(3);
    // The last three tools are the ones kept: a fresh index re-embeds the first three only.
    server.inputs.length = 0;
    await createToolSearch({ tools: TOOLS, embed, embeddingCache: cache }).searchAsync('chart');
    expect(server.inputs.slice(0, -1).map((text) => text.split('\n')[0])).toEqual(
      TOOLS.slice(0, 3).map((t) => t.name),
    );
  });
});

describe('embedder failures', () => {
  it('fall back to the lexical + graph result and say why', async () => {
    const embed = createOpenAIEmbedder({ baseUrl: server.baseUrl, model: 'fake-embed' });
    const search = createToolSearch({ tools: TOOLS, embed });
    const cases: Array<[Mode, RegExp]> = [
      ['http-500', /answered HTTP 500: \{"error":"model not loaded"\}/],
      ['short', /answered 5 embeddings for 6 inputs/],
      ['not-json', /not JSON; is it an OpenAI-compatible API\?/],
    ];
    for (const [mode, message] of cases) {
      server.mode = mode;
      const result = await search.searchAsync('weather forecast');
      expect(result.embeddingError).toMatch(message);
      expect(result.hits).toEqual(search.searchDetailed('weather forecast').hits);
    }
    // Once the server recovers, the same index embeds and fuses.
    server.mode = 'ok';
    const recovered = await search.searchAsync('plot a diagram');
    expect(recovered.embeddingError).toBeUndefined();
    expect(recovered.hits[0]!.name).toBe('viz.generate_word_cloud_chart');
  });

  it('report an unreachable server, a wrong path and a bad custom embedder', async () => {
    const unreachable = createToolSearch({
      tools: TOOLS,
      embed: createOpenAIEmbedder({ baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }),
    });
    expect((await unreachable.searchAsync('chart')).embeddingError).toMatch(
      /Cannot reach http:\/\/127\.0\.0\.1:9\/v1\/embeddings/,
    );
    const wrongPath = createToolSearch({
      tools: TOOLS,
      embed: createOpenAIEmbedder({ baseUrl: server.baseUrl.replace('/v1', '/v2'), model: 'm' }),
    });
    expect((await wrongPath.searchAsync('chart')).embeddingError).toMatch(/HTTP 404.*Check baseUrl/);
    const ragged = createToolSearch({
      tools: TOOLS,
      embed: (texts) => Promise.resolve(texts.map((_, i) => (i === 0 ? [1, 0] : [1, 0, 0]))),
    });
    expect((await ragged.searchAsync('chart')).embeddingError).toMatch(
      /vector 1 has 3 dimensions; expected 2/,
    );
    const throwing = createToolSearch({ tools: TOOLS, embed: () => Promise.reject(new Error('quota')) });
    expect((await throwing.searchAsync('chart')).embeddingError).toBe('The embedder failed: quota');
  });

  it('reject bad options with the field named', () => {
    const code = (fn: () => unknown): string | undefined => {
      try {
        fn();
      } catch (error) {
        return isCodecallError(error) ? `${error.code}:${error.message}` : String(error);
      }
      return undefined;
    };
    expect(code(() => createOpenAIEmbedder({ baseUrl: 'ftp://x', model: 'm' }))).toMatch(
      /INVALID_ARGUMENT:.*baseUrl/,
    );
    expect(code(() => createOpenAIEmbedder({ baseUrl: server.baseUrl, model: '' }))).toMatch(/model/);
    expect(code(() => createToolSearch({ tools: TOOLS, embed: 'yes' as never }))).toMatch(
      /"embed" must be a function/,
    );
  });
});

describe('search.embeddings in the configuration', () => {
  it('is checked by the schema and opened with a cache next to the configuration', async () => {
    const parse = (embeddings: unknown) => configFileSchema.safeParse({ search: { embeddings } });
    expect(parse({ baseUrl: server.baseUrl, model: 'fake-embed', apiKey: 'k', cache: false }).success).toBe(
      true,
    );
    const bad = parse({ baseUrl: 'file:///etc/passwd', model: 'm' });
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues[0]?.path)).toBe('["search","embeddings","baseUrl"]');
    expect(parse({ baseUrl: server.baseUrl }).success).toBe(false);

    const configDir = join(dir, 'project');
    const opened = await openEmbeddings(
      { baseUrl: server.baseUrl, model: 'fake-embed', weight: 2, guard: 0, flatShare: 0.5 },
      configDir,
    );
    expect(opened.embeddingWeight).toBe(2);
    expect(opened.embeddingGuard).toBe(0);
    expect(opened.embeddingFlatShare).toBe(0.5);
    const badShare = parse({ baseUrl: server.baseUrl, model: 'm', flatShare: 1.5 });
    expect(JSON.stringify(badShare.error?.issues[0]?.path)).toBe('["search","embeddings","flatShare"]');
    expect(badShare.error?.issues[0]?.message).toMatch(/from 0 \(fuse every query\) to 1/);
    const badGuard = parse({ baseUrl: server.baseUrl, model: 'm', guard: 51 });
    expect(JSON.stringify(badGuard.error?.issues[0]?.path)).toBe('["search","embeddings","guard"]');
    expect(parse({ baseUrl: server.baseUrl, model: 'm', guard: 2.5 }).success).toBe(false);
    const search = createToolSearch({ tools: TOOLS, ...opened });
    expect((await search.searchAsync('plot a diagram')).hits[0]!.name).toBe('viz.generate_word_cloud_chart');
    expect(existsSync(join(configDir, '.codecall', 'embeddings.sqlite'))).toBe(true);
    await opened.close();
    const uncached = await openEmbeddings(
      { baseUrl: server.baseUrl, model: 'fake-embed', cache: false },
      configDir,
    );
    expect(uncached.embeddingCache).toBeUndefined();
  });
});

describe('search.embeddings in the runtime (what serve and the agent loop search with)', () => {
  /** A runtime over an in-memory MCP server with the TOOLS catalog (one server per prefix). */
  async function openRuntime(
    search: Record<string, unknown>,
    searchWorker?: boolean,
  ): Promise<CodecallRuntime> {
    const servers = new Map<string, HostileTool[]>();
    for (const tool of TOOLS) {
      const [server, name] = tool.name.split('.') as [string, string];
      servers.set(server, [...(servers.get(server) ?? []), { name, description: tool.description ?? '' }]);
    }
    const transports = Object.fromEntries(
      [...servers].map(([key, tools]) => [key, inMemoryTransport(createHostileServer({ tools }).create)]),
    );
    return CodecallRuntime.open({
      config: parseConfig(
        { mcpServers: {}, search },
        { file: join(dir, 'runtime', 'codecall.json'), env: {} },
      ),
      history: false,
      tools: { transports, requireAll: true },
      ...(searchWorker !== undefined ? { searchWorker } : {}),
    });
  }

  it('findTools fuses the configured embedder on the search worker; searchTools stays lexical', async () => {
    // weight, guard and flat share from the configuration reach the worker: fused on every query
    // and unguarded, the loud embedding's best comes first (the default flat share leaves this
    // ranking, which has a head, in its order, and the default guard keeps the lexical best first).
    const runtime = await openRuntime({
      embeddings: {
        baseUrl: server.baseUrl,
        model: 'fake-embed',
        cache: false,
        weight: 100,
        guard: 0,
        flatShare: 0,
      },
    });
    try {
      const query = 'plot a diagram of my book sales';
      const found = await runtime.findTools(query, { limit: 3 });
      expect(runtime.searchOnWorker).toBe(true);
      expect(found.embeddingError).toBeUndefined();
      expect(found.hits[0]!.name).toBe('viz.generate_word_cloud_chart');
      const chart = found.hits.find((hit) => hit.name === 'viz.generate_word_cloud_chart');
      expect(chart?.reasons).toEqual(['close in meaning to the query (embedding rank 1)']);
      expect(chart?.tool.server).toBe('viz');
      expect(found.declarations).toContain('generate_word_cloud_chart');
      expect(runtime.searchTools(query, { limit: 3 }).hits.map((hit) => hit.name)).not.toContain(
        'viz.generate_word_cloud_chart',
      );
      // The embedder was asked over the wire: every tool once, then the query.
      expect(server.inputs).toHaveLength(TOOLS.length + 1);
      expect(server.inputs.at(-1)).toBe(query);

      // codecall serve answers search_tools the same way.
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await createCodecallServer({ runtime }).connect(serverSide);
      const client = new Client({ name: 'test', version: '1.0.0' });
      await client.connect(clientSide);
      const answer = (await client.callTool({ name: 'search_tools', arguments: { query, limit: 3 } })) as {
        content: Array<{ text: string }>;
      };
      expect(answer.content[0]!.text).toContain('viz.generate_word_cloud_chart');
      expect(answer.content[0]!.text).toContain('close in meaning to the query');
      await client.close();
    } finally {
      await runtime.close();
    }
  });

  it('says why when the embedder fails, and answers lexically', async () => {
    server.mode = 'http-500';
    const runtime = await openRuntime({
      embeddings: { baseUrl: server.baseUrl, model: 'fake-embed', cache: false },
    });
    try {
      const found = await runtime.findTools('book sales', { limit: 3 });
      expect(found.embeddingError).toMatch(/500/);
      expect(found.hits.map((hit) => hit.name)).toEqual(
        runtime.searchTools('book sales', { limit: 3 }).hits.map((hit) => hit.name),
      );
    } finally {
      await runtime.close();
    }
  });

  it('without an embedder, findTools (on the worker or not) equals searchTools exactly, as usage is learned', async () => {
    for (const searchWorker of [true, false]) {
      const runtime = await openRuntime({}, searchWorker);
      try {
        const queries = ['plot a diagram of my book sales', 'send an email', 'read_file', 'weather forecast'];
        const compare = async () => {
          for (const query of queries)
            expect(await runtime.findTools(query)).toEqual(runtime.searchTools(query));
          const regex = { regex: true };
          expect(await runtime.findTools('^viz\\.', regex)).toEqual(runtime.searchTools('^viz\\.', regex));
        };
        await compare();
        expect(runtime.searchOnWorker).toBe(searchWorker);
        // What is learned after the worker started reaches it (chains), in order with the queries.
        for (let i = 0; i < 3; i++) void runtime.recordSequence(['weather.get_forecast', 'mail.send_email']);
        void runtime.recordUsage({ query: 'tell the team', tools: ['mail.send_email'] });
        const learned = await runtime.findTools('weather forecast');
        expect(learned.chains[0]?.tools).toEqual(['weather.get_forecast', 'mail.send_email']);
        await compare();
        await expect(runtime.findTools('  ')).rejects.toMatchObject({ code: 'SEARCH_INVALID_QUERY' });
      } finally {
        await runtime.close();
      }
    }
  });
});
