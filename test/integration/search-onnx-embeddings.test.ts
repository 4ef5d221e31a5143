/**
 * @module
 * The local embedder: a tiny but real ONNX model made in the test (Gather from an embedding
 * table, see test/fixtures/tiny-onnx-model.ts) run by onnxruntime-node with a WordPiece
 * tokenizer.json read by @huggingface/tokenizers. Vectors against hand-computed means, the
 * attention mask, truncation, fusion in search, the configuration's `onnx` form (in the runtime,
 * on the search worker, and through `codecall serve`'s search_tools), and failures that never fail
 * a search. Nothing is downloaded.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { configFileSchema } from '../../src/config/schema.js';
import { parseConfig } from '../../src/config/index.js';
import { createOnnxEmbedder } from '../../src/search/onnx-embedder.js';
import { createToolSearch, type SearchableTool } from '../../src/search/tool-search.js';
import { openEmbeddings } from '../../src/execute/open-embeddings.js';
import { CodecallRuntime } from '../../src/execute/index.js';
import { main } from '../../src/cli/main.js';
import { createCodecallServer } from '../../src/server/index.js';
import { createHostileServer, type HostileTool } from '../../src/testing/servers/hostile-server.js';
import { inMemoryTransport } from '../../src/testing/servers/in-memory.js';
import { tempDir } from '../fixtures/temp-dir.js';
import { DIM, expectedVector, writeTinyModel } from '../fixtures/tiny-onnx-model.js';

function close(actual: readonly number[], expected: readonly number[]): void {
  expect(actual).toHaveLength(expected.length);
  actual.forEach((value, i) => expect(value).toBeCloseTo(expected[i]!, 5));
}

async function rejection(
  promise: Promise<unknown>,
): Promise<{ code: unknown; message: string; details: unknown }> {
  try {
    await promise;
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown; details?: unknown };
    return { code: e.code, message: String(e.message), details: e.details };
  }
  throw new Error('expected a rejection');
}

const TOOLS: SearchableTool[] = [
  { name: 'viz.draw_chart', description: 'Draw a chart of revenue.' },
  { name: 'mail.send_email', description: 'Send an email message.' },
  { name: 'weather.get_forecast', description: 'Forecast of rain.' },
  { name: 'books.list_books', description: 'List my book titles.' },
];

describe('createOnnxEmbedder', () => {
  it('mean-pools over the attention mask and scales to unit length (vectors checked by hand)', async () => {
    const dir = tempDir('codecall-onnx-');
    const { model } = writeTinyModel(dir);
    // The tokenizer is found beside the model when not named.
    const embed = createOnnxEmbedder({ modelPath: model });
    // One short and one long text in one batch: the short one is padded with the loud [PAD] row,
    // which the mask must keep out of its mean.
    const [short, long, unknown] = await embed(['Plot', 'plot my sales revenue money', 'zebra']);
    close(short!, expectedVector(['[CLS]', 'plot', '[SEP]']));
    close(long!, expectedVector(['[CLS]', 'plot', 'my', 'sales', 'revenue', 'money', '[SEP]']));
    close(unknown!, expectedVector(['[CLS]', '[UNK]', '[SEP]']));
    // Subword pieces: "books" is book + ##s.
    close((await embed(['books']))[0]!, expectedVector(['[CLS]', 'book', '##s', '[SEP]']));
    // Without normalisation the mean itself comes back.
    const raw = createOnnxEmbedder({ modelPath: model, normalize: false });
    const [mean] = await raw(['plot']);
    expect(mean).toHaveLength(DIM);
    close(mean!, [2 / 3, 0, 0, 0, 1 / 3, 0, 0, 0]);
    // CLS pooling takes the first token's vector: [CLS] alone.
    const cls = createOnnxEmbedder({ modelPath: model, pooling: 'cls' });
    close((await cls(['plot sales']))[0]!, [0, 0, 0, 0, 1, 0, 0, 0]);
  });

  it('cuts a text to maxTokens keeping [SEP], and runs in batches of batchSize', async () => {
    const { model, tokenizer } = writeTinyModel(tempDir('codecall-onnx-'));
    const embed = createOnnxEmbedder({
      modelPath: model,
      tokenizerPath: tokenizer,
      maxTokens: 4,
      batchSize: 2,
    });
    const texts = ['plot sales email weather rain', 'send', 'forecast', 'money', 'chart'];
    const vectors = await embed(texts);
    expect(vectors).toHaveLength(5);
    close(vectors[0]!, expectedVector(['[CLS]', 'plot', 'sales', '[SEP]']));
    close(vectors[4]!, expectedVector(['[CLS]', 'chart', '[SEP]']));
  });

  it('without a maskable input the model still runs (input_ids only)', async () => {
    const { model } = writeTinyModel(tempDir('codecall-onnx-'), { bertInputs: false });
    const [vector] = await createOnnxEmbedder({ modelPath: model })(['weather']);
    close(vector!, expectedVector(['[CLS]', 'weather', '[SEP]']));
  });

  it('names the file and the fix: missing model, missing tokenizer, corrupt model, wrong output, unknown input', async () => {
    const dir = tempDir('codecall-onnx-');
    const missing = await rejection(createOnnxEmbedder({ modelPath: join(dir, 'nope.onnx') })(['x']));
    expect(missing.code).toBe('SEARCH_EMBEDDING_FAILED');
    expect(missing.message).toContain(join(dir, 'nope.onnx'));
    expect(missing.message).toMatch(/downloads nothing/);

    const lone = join(dir, 'lone');
    mkdirSync(lone);
    const { model } = writeTinyModel(lone);
    const noTokenizer = await rejection(
      createOnnxEmbedder({ modelPath: model, tokenizerPath: join(lone, 'missing.json') })(['x']),
    );
    expect(noTokenizer.code).toBe('SEARCH_EMBEDDING_FAILED');
    expect(noTokenizer.message).toContain(join(lone, 'missing.json'));
    expect(noTokenizer.details).toMatchObject({ field: 'tokenizerPath' });

    const corrupt = join(dir, 'corrupt');
    mkdirSync(corrupt);
    writeTinyModel(corrupt);
    writeFileSync(join(corrupt, 'model.onnx'), 'this is not a protobuf model at all');
    const bad = await rejection(createOnnxEmbedder({ modelPath: join(corrupt, 'model.onnx') })(['x']));
    expect(bad.code).toBe('SEARCH_EMBEDDING_FAILED');
    expect(bad.message).toMatch(/Cannot load .*corrupt\/model\.onnx as an ONNX model/);

    const logits = join(dir, 'logits');
    mkdirSync(logits);
    writeTinyModel(logits, { outputName: 'logits' });
    const wrong = await rejection(createOnnxEmbedder({ modelPath: join(logits, 'model.onnx') })(['x']));
    expect(wrong.message).toMatch(
      /has no output "last_hidden_state" or .*its outputs: logits.*set outputName/,
    );
    // Naming the output makes the same model usable.
    const named = createOnnxEmbedder({ modelPath: join(logits, 'model.onnx'), outputName: 'logits' });
    close((await named(['rain']))[0]!, expectedVector(['[CLS]', 'rain', '[SEP]']));

    const pixels = join(dir, 'pixels');
    mkdirSync(pixels);
    writeTinyModel(pixels, { extraInputs: ['pixel_values'] });
    const input = await rejection(createOnnxEmbedder({ modelPath: join(pixels, 'model.onnx') })(['x']));
    expect(input.message).toMatch(/needs the input "pixel_values", which codecall does not feed/);

    expect(() => createOnnxEmbedder({ modelPath: '' })).toThrow(/modelPath/);
    expect(() => createOnnxEmbedder({ modelPath: model, maxTokens: 0 })).toThrow(/maxTokens/);
    expect(() => createOnnxEmbedder({ modelPath: model, pooling: 'max' as never })).toThrow(/pooling/);
  });

  it('a failed load is tried again once the file changes', async () => {
    const dir = tempDir('codecall-onnx-');
    const { model } = writeTinyModel(dir);
    writeFileSync(model, 'not yet');
    const embed = createOnnxEmbedder({ modelPath: model });
    expect((await rejection(embed(['plot']))).message).toMatch(/Cannot load/);
    writeTinyModel(dir);
    close((await embed(['plot']))[0]!, expectedVector(['[CLS]', 'plot', '[SEP]']));
  });
});

describe('the local embedder in search', () => {
  it('fusion finds a tool named only in other words than the query', async () => {
    const { model } = writeTinyModel(tempDir('codecall-onnx-'));
    const search = createToolSearch({ tools: TOOLS, embed: createOnnxEmbedder({ modelPath: model }) });
    const query = 'plot my sales';
    const lexical = search.search(query).map((h) => h.name);
    expect(lexical).not.toContain('viz.draw_chart');
    const fused = await search.searchAsync(query, { limit: 3 });
    expect(fused.embeddingError).toBeUndefined();
    expect(fused.hits[0]!.name).toBe('viz.draw_chart');
    expect(fused.hits[0]!.reasons).toEqual(['close in meaning to the query (embedding rank 1)']);
  });

  it('a broken model never fails a search: lexical hits and embeddingError', async () => {
    const dir = tempDir('codecall-onnx-');
    const { model } = writeTinyModel(dir, { outputName: 'logits' });
    const search = createToolSearch({ tools: TOOLS, embed: createOnnxEmbedder({ modelPath: model }) });
    const result = await search.searchAsync('send email', { limit: 3 });
    expect(result.embeddingError).toMatch(/has no output/);
    expect(result.hits.map((h) => h.name)).toEqual(
      search.search('send email', { limit: 3 }).map((h) => h.name),
    );
    expect(result.hits[0]!.name).toBe('mail.send_email');
  });
});

describe('search.embeddings.onnx in the configuration', () => {
  it('takes baseUrl + model or onnx, exactly one, with an error that says which', () => {
    const check = (embeddings: unknown) => configFileSchema.safeParse({ search: { embeddings } });
    expect(check({ onnx: { model: 'm/model.onnx' } }).success).toBe(true);
    const both = check({ baseUrl: 'http://127.0.0.1:1/v1', model: 'x', onnx: { model: 'm.onnx' } });
    expect(both.success).toBe(false);
    expect(JSON.stringify(both.error?.issues)).toMatch(/not both/);
    const neither = check({ cache: false });
    expect(JSON.stringify(neither.error?.issues)).toMatch(/needs baseUrl \+ model .* or onnx/);
    const apiKey = check({ onnx: { model: 'm.onnx' }, apiKey: 'k' });
    expect(JSON.stringify(apiKey.error?.issues)).toMatch(/apiKey belongs to the API form/);
    const noModel = check({ baseUrl: 'http://127.0.0.1:1/v1' });
    expect(JSON.stringify(noModel.error?.issues)).toMatch(/model is required with baseUrl/);
    expect(check({ onnx: { model: 'm.onnx', maxTokens: 1 } }).success).toBe(false);
    expect(check({ onnx: { model: 'm.onnx', bogus: 1 } }).success).toBe(false);
  });

  it('resolves paths against the configuration folder, with defaults', () => {
    const config = parseConfig(
      { search: { embeddings: { onnx: { model: 'models/model.onnx', tokenizer: 'models/tok.json' } } } },
      { file: '/project/codecall.json', env: {} },
    );
    expect(config.search.embeddings).toMatchObject({
      baseUrl: undefined,
      model: undefined,
      onnx: {
        model: '/project/models/model.onnx',
        tokenizer: '/project/models/tok.json',
        pooling: 'mean',
        normalize: true,
        maxTokens: 256,
        output: undefined,
        threads: 1,
      },
      batchSize: 16,
    });
  });

  it("openEmbeddings caches vectors under the model files' hashes; a changed model never reuses them", async () => {
    const dir = tempDir('codecall-onnx-');
    mkdirSync(join(dir, 'm'));
    writeTinyModel(join(dir, 'm'));
    const config = { onnx: { model: 'm/model.onnx' }, cache: 'vectors.sqlite' };
    const first = await openEmbeddings(config, dir);
    try {
      const search = createToolSearch({ tools: TOOLS, ...first });
      expect((await search.searchAsync('plot my sales')).hits[0]!.name).toBe('viz.draw_chart');
    } finally {
      await first.close();
    }
    // The same files: the tool vectors come from the cache, so only the query is embedded.
    const counted: string[][] = [];
    const again = await openEmbeddings(config, dir);
    try {
      const search = createToolSearch({
        tools: TOOLS,
        ...again,
        embed: (texts) => {
          counted.push(texts);
          return again.embed(texts);
        },
      });
      await search.searchAsync('plot my sales');
      expect(counted).toEqual([['plot my sales']]);
    } finally {
      await again.close();
    }
    // Another model in the same place: a different cache key, every tool embedded again.
    writeTinyModel(join(dir, 'm'), { bertInputs: false });
    counted.length = 0;
    const changed = await openEmbeddings(config, dir);
    try {
      const search = createToolSearch({
        tools: TOOLS,
        ...changed,
        embed: (texts) => {
          counted.push(texts);
          return changed.embed(texts);
        },
      });
      await search.searchAsync('plot my sales');
      expect(counted.flat()).toHaveLength(TOOLS.length + 1);
    } finally {
      await changed.close();
    }
  });

  it('findTools fuses the local model on the search worker, and codecall serve answers with it', async () => {
    const dir = tempDir('codecall-onnx-');
    mkdirSync(join(dir, 'models'));
    writeTinyModel(join(dir, 'models'));
    const servers = new Map<string, HostileTool[]>();
    for (const tool of TOOLS) {
      const [server, name] = tool.name.split('.') as [string, string];
      servers.set(server, [...(servers.get(server) ?? []), { name, description: tool.description ?? '' }]);
    }
    const transports = Object.fromEntries(
      [...servers].map(([key, tools]) => [key, inMemoryTransport(createHostileServer({ tools }).create)]),
    );
    const runtime = await CodecallRuntime.open({
      config: parseConfig(
        { mcpServers: {}, search: { embeddings: { onnx: { model: 'models/model.onnx' }, cache: false } } },
        { file: join(dir, 'codecall.json'), env: {} },
      ),
      history: false,
      tools: { transports, requireAll: true },
    });
    try {
      const query = 'plot my sales';
      const found = await runtime.findTools(query, { limit: 3 });
      expect(runtime.searchOnWorker).toBe(true);
      expect(found.embeddingError).toBeUndefined();
      expect(found.hits[0]?.name).toBe('viz.draw_chart');
      expect(runtime.searchTools(query, { limit: 3 }).hits.map((h) => h.name)).not.toContain(
        'viz.draw_chart',
      );

      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await createCodecallServer({ runtime }).connect(serverSide);
      const client = new Client({ name: 'test', version: '1.0.0' });
      await client.connect(clientSide);
      const answer = (await client.callTool({ name: 'search_tools', arguments: { query, limit: 3 } })) as {
        content: Array<{ text: string }>;
      };
      expect(answer.content[0]!.text).toContain('viz.draw_chart');
      expect(answer.content[0]!.text).toContain('close in meaning to the query');
      await client.close();
    } finally {
      await runtime.close();
    }
  });

  it('a missing model file in the configuration: findTools answers lexically and says why', async () => {
    const dir = tempDir('codecall-onnx-');
    const runtime = await CodecallRuntime.open({
      config: parseConfig(
        { mcpServers: {}, search: { embeddings: { onnx: { model: 'absent/model.onnx' } } } },
        { file: join(dir, 'codecall.json'), env: {} },
      ),
      history: false,
      tools: {
        transports: {
          mail: inMemoryTransport(
            createHostileServer({ tools: [{ name: 'send_email', description: 'Send an email message.' }] })
              .create,
          ),
        },
        requireAll: true,
      },
    });
    try {
      const found = await runtime.findTools('send email', { limit: 3 });
      expect(found.embeddingError).toContain(join(dir, 'absent', 'model.onnx'));
      expect(found.hits.map((h) => h.name)).toEqual(['mail.send_email']);
    } finally {
      await runtime.close();
    }
  });
});

describe('offline: the local embedder sends nothing', () => {
  it('starts onnxruntime on the search worker with its telemetry uploader off (no session files, ORT_DISABLE_TELEMETRY=1 set on the main thread)', () => {
    // A fresh process of the built package (so no earlier test set the variable): its temp and
    // working folders must stay empty, as onnxruntime writes .ses and mat-debug-<pid>.log there
    // when its telemetry starts.
    const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
    const dir = tempDir('codecall-onnx-');
    mkdirSync(join(dir, 'models'));
    writeTinyModel(join(dir, 'models'));
    const work = join(dir, 'work');
    const temp = join(dir, 'temp');
    mkdirSync(work);
    mkdirSync(temp);
    const script = `
const { CodecallRuntime, parseConfig } = await import(${JSON.stringify(join(root, 'dist', 'index.js'))});
const { createExpenseServer, inMemoryTransport } = await import(${JSON.stringify(join(root, 'dist', 'testing', 'index.js'))});
const config = parseConfig(
  { mcpServers: {}, search: { embeddings: { onnx: { model: 'models/model.onnx' }, cache: false } } },
  { file: ${JSON.stringify(join(dir, 'codecall.json'))}, env: {} },
);
const runtime = await CodecallRuntime.open({
  config,
  history: false,
  tools: { transports: { expenses: inMemoryTransport(() => createExpenseServer()) }, requireAll: true },
});
const found = await runtime.findTools('team expenses', { limit: 3 });
console.log(JSON.stringify({ onWorker: runtime.searchOnWorker, error: found.embeddingError ?? null, hits: found.hits.length, variable: process.env.ORT_DISABLE_TELEMETRY }));
await runtime.close();
`;
    const env: Record<string, string | undefined> = { ...process.env, TMPDIR: temp };
    delete env.ORT_DISABLE_TELEMETRY;
    // A file, not --eval: a worker thread inherits the process's flags, and --input-type breaks it.
    const file = join(dir, 'probe.mjs');
    writeFileSync(file, script);
    const result = spawnSync(process.execPath, [file], {
      cwd: work,
      env,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(result.status, result.stderr).toBe(0);
    expect(readdirSync(temp)).toEqual([]);
    expect(readdirSync(work)).toEqual([]);
    expect(JSON.parse(result.stdout.trim().split('\n').at(-1)!)).toEqual({
      onWorker: true,
      error: null,
      hits: 3,
      variable: '1',
    });
  });
});

describe('codecall search with search.embeddings.onnx', () => {
  const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
  const SDK = join(ROOT, 'node_modules', '@modelcontextprotocol', 'sdk', 'dist', 'esm');

  /** A stdio MCP server listing {@link TOOLS} and a configuration that spawns it. */
  function project(onnx: Record<string, unknown>): { dir: string; config: string } {
    const dir = tempDir('codecall-onnx-cli-');
    mkdirSync(join(dir, 'models'));
    writeTinyModel(join(dir, 'models'));
    const server = join(dir, 'server.mjs');
    writeFileSync(
      server,
      `import { Server } from ${JSON.stringify(pathToFileURL(join(SDK, 'server', 'index.js')).href)};
import { StdioServerTransport } from ${JSON.stringify(pathToFileURL(join(SDK, 'server', 'stdio.js')).href)};
import { ListToolsRequestSchema, CallToolRequestSchema } from ${JSON.stringify(pathToFileURL(join(SDK, 'types.js')).href)};
const server = new Server({ name: 'tools', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: ${JSON.stringify(TOOLS.map((t) => ({ name: t.name.replace('.', '_'), description: t.description, inputSchema: { type: 'object' } })))},
}));
server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: 'ok' }] }));
await server.connect(new StdioServerTransport());
`,
    );
    const config = join(dir, 'codecall.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { t: { command: process.execPath, args: [server] } },
        history: { enabled: false },
        search: { embeddings: { onnx, cache: false } },
      }),
    );
    return { dir, config };
  }

  async function search(
    query: string,
    config: string,
    cwd: string,
  ): Promise<{ code: number; out: string; err: string }> {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    let out = '';
    let err = '';
    stdout.on('data', (d: Buffer) => (out += d.toString()));
    stderr.on('data', (d: Buffer) => (err += d.toString()));
    const stdin = new PassThrough();
    stdin.end('');
    const code = await main(['search', query, '--json', '--limit', '3', '--config', config], {
      stdout,
      stderr,
      stdin,
      cwd,
      env: {},
      signal: new AbortController().signal,
    });
    return { code, out, err };
  }

  it('fuses the model on disk; a missing model is named on stderr and the hits are lexical', async () => {
    const good = project({ model: 'models/model.onnx' });
    const fused = await search('plot my sales', good.config, good.dir);
    expect(fused.err).toBe('');
    expect(fused.code).toBe(0);
    const hits = (JSON.parse(fused.out) as { hits: Array<{ name: string; reasons: string[] }> }).hits;
    expect(hits[0]!.name).toBe('t.viz_draw_chart');
    expect(hits[0]!.reasons).toEqual(['close in meaning to the query (embedding rank 1)']);

    const missing = project({ model: 'models/absent.onnx' });
    const lexical = await search('send email', missing.config, missing.dir);
    expect(lexical.code).toBe(0);
    expect(lexical.err).toContain(
      `the embedder failed (No embedding model at ${join(missing.dir, 'models', 'absent.onnx')}`,
    );
    expect((JSON.parse(lexical.out) as { hits: Array<{ name: string }> }).hits[0]!.name).toBe(
      't.mail_send_email',
    );
  });
});
