/**
 * @module
 * One upstream server's OAuth state on disk (`mcpServers.<name>.oauth.tokenFile`, in the user's
 * state folder): tokens, the client registration, the PKCE verifier of a login in progress and the
 * discovery state, each kept exactly as the SDK handed it over (the SDK stamps the issuer it binds
 * them to). The file is written whole, to a temporary file renamed over it, with mode 0600 in a
 * folder of mode 0700; a file that cannot be read back counts as empty (log in again).
 */
import { randomUUID } from 'node:crypto';
import { chmod, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DEFAULT_UPSTREAM_OAUTH_TOKEN_FILE_MAX_BYTES } from '../../config/defaults.js';

/** What is kept for one server; every field as the SDK gave it. */
export interface OAuthState {
  tokens?: Record<string, unknown>;
  /** When `tokens` were saved (ms since the epoch), to tell their age from `expires_in`. */
  tokensSavedAt?: number;
  clientInformation?: Record<string, unknown>;
  codeVerifier?: string;
  discoveryState?: Record<string, unknown>;
}

/** The token file of one server. Reads are fresh each time (another process may have refreshed). */
export class OAuthTokenStore {
  private writing: Promise<void> = Promise.resolve();

  constructor(readonly file: string) {}

  /** The stored state; `{}` when there is no file or it cannot be read. */
  async read(): Promise<OAuthState> {
    try {
      const info = await stat(this.file);
      if (info.size > DEFAULT_UPSTREAM_OAUTH_TOKEN_FILE_MAX_BYTES) return {};
      const value: unknown = JSON.parse(await readFile(this.file, 'utf8'));
      return typeof value === 'object' && value !== null && !Array.isArray(value)
        ? (value as OAuthState)
        : {};
    } catch {
      return {};
    }
  }

  /** Changes the stored state; writes are serialised so two saves cannot lose each other. */
  update(change: (state: OAuthState) => OAuthState): Promise<void> {
    const next = this.writing.then(async () => {
      const state = change(await this.read());
      await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
      const temporary = `${this.file}.${randomUUID()}.tmp`;
      try {
        await writeFile(temporary, `${JSON.stringify(state)}\n`, { mode: 0o600 });
        await chmod(temporary, 0o600);
        await rename(temporary, this.file);
      } catch (error) {
        await rm(temporary, { force: true });
        throw error;
      }
    });
    this.writing = next.catch(() => undefined);
    return next;
  }

  /** Forgets everything (`codecall auth logout`); true when there was a file. */
  async remove(): Promise<boolean> {
    await this.writing;
    try {
      await rm(this.file);
      return true;
    } catch {
      return false;
    }
  }
}
