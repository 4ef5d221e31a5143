/**
 * @module
 * Names as small integers: each distinct name gets an id, ids are counted by the entries that hold
 * them, and an id nobody holds any more is forgotten with its name and handed to the next new
 * name, so ids stay dense (they index typed arrays) and memory follows what is held.
 */

/** Interned names with reference counts; ids are reused once released to zero. */
export class InternedNames {
  readonly #ids = new Map<string, number>();
  readonly #names: Array<string | undefined> = [];
  #refs = new Int32Array(16);
  readonly #free: number[] = [];
  #version = 0;

  /** Bumped whenever an id stops naming what it named (released, or reused for a new name). */
  get version(): number {
    return this.#version;
  }

  /** Names held (ids in use). */
  get size(): number {
    return this.#ids.size;
  }

  /** One more than the largest id ever handed out: typed arrays indexed by id need this length. */
  get capacity(): number {
    return this.#names.length;
  }

  /** The id of `name`, made (with no holder yet) when it has none; the caller retains it. */
  intern(name: string): number {
    let id = this.#ids.get(name);
    if (id !== undefined) return id;
    id = this.#free.pop() ?? this.#names.length;
    if (id === this.#names.length) {
      this.#names.push(name);
      if (id >= this.#refs.length) {
        const grown = new Int32Array(this.#refs.length * 2);
        grown.set(this.#refs);
        this.#refs = grown;
      }
    } else {
      this.#names[id] = name;
      this.#version++;
    }
    this.#refs[id] = 0;
    this.#ids.set(name, id);
    return id;
  }

  /** The id of `name`, if it is held. */
  idOf(name: string): number | undefined {
    return this.#ids.get(name);
  }

  /** The name of a held id. */
  name(id: number): string {
    return this.#names[id]!;
  }

  /** Counts one more holder of `id`. */
  retain(id: number): void {
    this.#refs[id]!++;
  }

  /** Counts one holder less; at none, the name is forgotten and its id goes back to be reused. */
  release(id: number): void {
    if (--this.#refs[id]! > 0) return;
    this.#ids.delete(this.#names[id]!);
    this.#names[id] = undefined;
    this.#free.push(id);
    this.#version++;
  }
}
