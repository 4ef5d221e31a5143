/**
 * @module
 * A tool result the host keeps instead of copying it into the sandbox (see docs/data.md): the
 * invoker resolves with a {@link HeldResult}, the run controller sends only its descriptor, and
 * the prelude turns the descriptor into a `ResultHandle` whose methods are calls of
 * {@link HANDLE_CALL} answered on the host. Shared by `isolate/` (which sends it), `execute/`
 * (which holds the results) and `sandbox/` (which spells the same names).
 */

/** The call a handle's methods make (`{ handle, op, … }`); answered by the host, never a tool. */
export const HANDLE_CALL = 'codecall:handle';

/** The `code` of a successful settle whose payload is a handle's descriptor (see sandbox/prelude.ts). */
export const HANDLE_PAYLOAD = 'handle';

/** The key a handle serialises to (`{"$codecall_handle": id}`), replaced on the host when it is a tool argument. */
export const HANDLE_MARKER_KEY = '$codecall_handle';

/** What the script learns of a held result (plain JSON: it is all that crosses). */
export interface HandleDescriptor {
  /** Random id of the result in its run's table (128 bits, base64url): unguessable, run-scoped. */
  id: string;
  /** Qualified name of the tool that returned it. */
  tool: string;
  /** UTF-8 bytes of its JSON text. */
  bytes: number;
  /** `array` (rows are its items), `object` (rows are the items of its largest array), `lines` (text). */
  kind: 'array' | 'object' | 'lines';
  /** JSON pointer of the rows (`""` the root). */
  rowsAt: string;
  /** Rows at `rowsAt`. */
  length: number;
  /** Keys of the object (`object`), else of the first row; at most a few dozen. */
  keys: string[];
  /** Whether the result was spilled to the run's temp file. */
  spilled: boolean;
}

/** A result the host holds; the invoker resolves with it (host objects only: it never crosses). */
export class HeldResult {
  readonly descriptor: HandleDescriptor;

  constructor(descriptor: HandleDescriptor) {
    this.descriptor = descriptor;
  }

  /** True for a {@link HeldResult}. */
  static isInstance(value: unknown): value is HeldResult {
    return value instanceof HeldResult;
  }
}
