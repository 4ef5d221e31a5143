/**
 * @module
 * The container id of a paused script: a signed, bounded cursor naming the run whose journal
 * holds the script's calls, and when it expires. It is opaque to the client and forged or
 * expired ids are refused; any serve process holding the same key reads it (`serve.vendorSecret`).
 */
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { DEFAULT_VENDOR_MAX_CONTAINER_ID_CHARS } from '../config/defaults.js';

/** What a container id carries. */
export interface ContainerCursor {
  /** The run whose journal holds the paused script's calls (32 hex digits). */
  runId: string;
  /** Epoch milliseconds after which the id is refused. */
  expiresAt: number;
}

/** Why a container id was refused. */
export type ContainerRefusal = 'malformed' | 'forged' | 'expired';

const PREFIX = 'container_cc1_';
const RUN_ID = /^[0-9a-f]{32}$/;

/** A fresh run id (32 hex digits, safe in file names and tool ids). */
export function newRunId(): string {
  return randomUUID().replaceAll('-', '');
}

/** Signs and reads container ids with one key. */
export class ContainerSigner {
  readonly #key: Buffer;

  /** `secret` absent: a random key, so ids are valid in this process only. */
  constructor(secret?: string) {
    this.#key = secret === undefined ? randomBytes(32) : Buffer.from(secret, 'utf8');
  }

  #mac(payload: string): string {
    return createHmac('sha256', this.#key).update(payload).digest('base64url');
  }

  /** The container id of `cursor`. */
  sign(cursor: ContainerCursor): string {
    const payload = `${cursor.runId}.${cursor.expiresAt.toString(36)}`;
    return `${PREFIX}${payload}.${this.#mac(payload)}`;
  }

  /** The cursor of a container id from a client, or why it is refused. */
  verify(id: unknown, now = Date.now()): ContainerCursor | { refused: ContainerRefusal } {
    if (typeof id !== 'string' || id.length > DEFAULT_VENDOR_MAX_CONTAINER_ID_CHARS || !id.startsWith(PREFIX))
      return { refused: 'malformed' };
    const [runId, expires, mac, ...rest] = id.slice(PREFIX.length).split('.');
    if (runId === undefined || expires === undefined || mac === undefined || rest.length > 0)
      return { refused: 'malformed' };
    const expected = Buffer.from(this.#mac(`${runId}.${expires}`));
    const given = Buffer.from(mac);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { refused: 'forged' };
    const expiresAt = parseInt(expires, 36);
    if (!RUN_ID.test(runId) || !Number.isSafeInteger(expiresAt)) return { refused: 'malformed' };
    if (expiresAt <= now) return { refused: 'expired' };
    return { runId, expiresAt };
  }
}
