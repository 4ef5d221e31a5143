/**
 * @module
 * The exact-name lookup of a search index: the tools a query names exactly (full name, name without
 * its server prefix, or either split into lowercase words). The keys themselves are not stored:
 * each tool's keys are hashed (FNV-1a over UTF-16 code units) into chained buckets held in typed
 * arrays, ASCII names hashed in one scan without building the key strings, and a lookup verifies
 * each candidate by computing its keys. Pure.
 */
import { charClass, DIGIT, LOWER, OTHER, splitName, UPPER } from './tokenize.js';

const FNV_OFFSET = 0x811c9dc5 | 0;
const FNV_PRIME = 16_777_619;
const SPACE = 32;

/** The FNV-1a hash of `key`'s UTF-16 code units. */
export function hashKey(key: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), FNV_PRIME);
  return h;
}

/** The keys an exact-name query finds a tool by. */
export function exactKeys(name: string, server: string): string[] {
  const lower = name.toLowerCase();
  const keys = new Set([lower, splitName(name).join(' ')]);
  const s = server.toLowerCase();
  if (s && lower.startsWith(s) && lower.length > s.length + 1) {
    const bare = lower.slice(s.length).replace(/^(?:\.|::|__|_|-|\/)/, '');
    keys.add(bare);
    keys.add(splitName(bare).join(' '));
  }
  return [...keys].filter((k) => k !== '');
}

function lowerCode(code: number): number {
  return code >= 65 && code <= 90 ? code + 32 : code;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 127) return false;
  return true;
}

/** Hash of `text.slice(start).toLowerCase()` (ASCII `text`). */
function lowerHash(text: string, start: number): number {
  let h = FNV_OFFSET;
  for (let i = start; i < text.length; i++) h = Math.imul(h ^ lowerCode(text.charCodeAt(i)), FNV_PRIME);
  return h;
}

/**
 * Hash of `splitName(part).join(' ')` where `part` is `text.slice(start)`, lowercased first when
 * `lowered` (ASCII `text`), or undefined when it has no word: the same runs of letters and digits,
 * hump splits ({@link splitHumps}) and lowercase words, joined by spaces, without the strings.
 */
function splitHash(text: string, start: number, lowered: boolean): number | undefined {
  let h = FNV_OFFSET;
  let words = 0;
  let previous = OTHER;
  const end = text.length;
  for (let i = start; i < end; i++) {
    const raw = text.charCodeAt(i);
    const current = charClass(lowered ? lowerCode(raw) : raw);
    if (current === OTHER) {
      previous = OTHER;
      continue;
    }
    let split: boolean;
    if (previous === OTHER) split = words++ > 0;
    else if (current === UPPER) {
      split =
        previous === LOWER ||
        previous === DIGIT ||
        (previous === UPPER &&
          i + 1 < end &&
          charClass(lowered ? lowerCode(text.charCodeAt(i + 1)) : text.charCodeAt(i + 1)) === LOWER);
    } else if (current === DIGIT) split = previous === LOWER || previous === UPPER;
    else split = previous === DIGIT;
    if (split) h = Math.imul(h ^ SPACE, FNV_PRIME);
    h = Math.imul(h ^ lowerCode(raw), FNV_PRIME);
    previous = current;
  }
  return words === 0 ? undefined : h;
}

/** Length of the separator the regex `^(?:\.|::|__|_|-|\/)` takes at `at` (0 when none). */
function separatorAt(text: string, at: number): number {
  const c = text.charCodeAt(at);
  if (c === 46 || c === 45 || c === 47) return 1;
  if (c === 58) return text.charCodeAt(at + 1) === 58 ? 2 : 0;
  if (c === 95) return text.charCodeAt(at + 1) === 95 ? 2 : 1;
  return 0;
}

/** Pushes `hash` onto `out` unless it is there. */
function pushOnce(out: number[], hash: number | undefined): void {
  if (hash !== undefined && !out.includes(hash)) out.push(hash);
}

/** Sets `out` to the distinct hashes of the keys of {@link exactKeys}`(name, server)`. */
export function keyHashes(name: string, server: string, out: number[]): void {
  out.length = 0;
  if (!isAscii(name) || !isAscii(server)) {
    for (const key of exactKeys(name, server)) pushOnce(out, hashKey(key));
    return;
  }
  pushOnce(out, lowerHash(name, 0));
  pushOnce(out, splitHash(name, 0, false));
  const s = server.length;
  if (s === 0 || name.length <= s + 1) return;
  for (let i = 0; i < s; i++) if (lowerCode(name.charCodeAt(i)) !== lowerCode(server.charCodeAt(i))) return;
  const bare = s + separatorAt(name, s);
  if (bare < name.length) pushOnce(out, lowerHash(name, bare));
  pushOnce(out, splitHash(name, bare, true));
}

/** Initial buckets (a power of two); doubled when the nodes outnumber them. */
const INITIAL_BUCKETS = 1_024;

/**
 * Entry ids by the hashes of their exact-name keys: chained buckets in typed arrays (a node per
 * distinct key hash of an entry, freed nodes reused). Candidates must be verified by their keys.
 */
export class ExactNameTable {
  #heads = new Int32Array(INITIAL_BUCKETS);
  /** Per node: the key hash, the entry id (-1 when free) and the next node + 1 (0 ends a chain). */
  #hashes = new Int32Array(0);
  #entries = new Int32Array(0);
  #next = new Int32Array(0);
  #used = 0;
  #live = 0;
  readonly #free: number[] = [];
  readonly #scratch: number[] = [];

  /** Indexes entry `id` under the keys of (`name`, `server`). */
  add(id: number, name: string, server: string): void {
    keyHashes(name, server, this.#scratch);
    if (this.#live + this.#scratch.length > this.#heads.length) this.#rehash(this.#heads.length * 2);
    for (const hash of this.#scratch) {
      let node = this.#free.pop();
      if (node === undefined) {
        node = this.#used++;
        if (node >= this.#hashes.length) this.#grow(Math.max(64, node * 2));
      }
      const bucket = hash & (this.#heads.length - 1);
      this.#hashes[node] = hash;
      this.#entries[node] = id;
      this.#next[node] = this.#heads[bucket]!;
      this.#heads[bucket] = node + 1;
      this.#live++;
    }
  }

  /** Forgets entry `id`, indexed under (`name`, `server`). */
  remove(id: number, name: string, server: string): void {
    keyHashes(name, server, this.#scratch);
    for (const hash of this.#scratch) {
      const bucket = hash & (this.#heads.length - 1);
      let previous = -1;
      for (let node = this.#heads[bucket]! - 1; node >= 0; node = this.#next[node]! - 1) {
        if (this.#entries[node] !== id || this.#hashes[node] !== hash) {
          previous = node;
          continue;
        }
        if (previous < 0) this.#heads[bucket] = this.#next[node]!;
        else this.#next[previous] = this.#next[node]!;
        this.#entries[node] = -1;
        this.#free.push(node);
        this.#live--;
        break;
      }
    }
  }

  /** The entry ids indexed under a key hashing to `hash`, ascending, each once (to be verified). */
  candidates(hash: number): number[] {
    const out: number[] = [];
    const bucket = hash & (this.#heads.length - 1);
    for (let node = this.#heads[bucket]! - 1; node >= 0; node = this.#next[node]! - 1) {
      if (this.#hashes[node] === hash && !out.includes(this.#entries[node]!)) out.push(this.#entries[node]!);
    }
    return out.sort((x, y) => x - y);
  }

  #grow(size: number): void {
    const copy = (old: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const out = new Int32Array(size);
      out.set(old);
      return out;
    };
    this.#hashes = copy(this.#hashes);
    this.#entries = copy(this.#entries);
    this.#next = copy(this.#next);
  }

  #rehash(buckets: number): void {
    const heads = new Int32Array(buckets);
    for (let node = 0; node < this.#used; node++) {
      if (this.#entries[node] === -1) continue;
      const bucket = this.#hashes[node]! & (buckets - 1);
      this.#next[node] = heads[bucket]!;
      heads[bucket] = node + 1;
    }
    this.#heads = heads;
  }
}
