/**
 * Multi-MB tool results over stdio: the real `@modelcontextprotocol/server-filesystem` (which
 * sends a file's text twice, as `content` and `structuredContent`) read by a script. Past the
 * SDK's own 10 MB read buffer by default; past a configured `maxMessageBytes` the script gets an
 * error naming the limit and the key.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SERVER_MAX_MESSAGE_BYTES } from '../../../src/config/defaults.js';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallRuntime } from '../../../src/execute/index.js';

const ROOT = resolve(import.meta.dirname, '../../..');
const FILESYSTEM = join(ROOT, 'node_modules', '.bin', 'mcp-server-filesystem');
const FILE_BYTES = 8 * 1_048_576;

let dir: string;
let file: string;
let expectedLines: number;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'codecall-large-'));
  file = join(dir, 'big.log');
  const line = '2025-01-01T00:00:00Z INFO  GET /api/items 200 12ms "quoted" \\ path\n';
  expectedLines = Math.ceil(FILE_BYTES / line.length);
  writeFileSync(file, line.repeat(expectedLines));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function openRuntime(server: Record<string, unknown> = {}): Promise<CodecallRuntime> {
  const config = parseConfig(
    {
      mcpServers: { fs: { command: process.execPath, args: [FILESYSTEM, dir], ...server } },
      sandbox: { workers: 1 },
    },
    { file: join(dir, 'codecall.json'), env: {} },
  );
  return CodecallRuntime.open({ config, history: false });
}

const script = (path: string): string => `
  const { content } = await tools.fs.read_text_file({ path: ${JSON.stringify(path)} });
  console.log(content.length, content.split('\\n').length - 1);
`;

describe('large results from a stdio server', () => {
  it('a script reads an 8 MB file through server-filesystem (over the SDK default buffer)', async () => {
    const runtime = await openRuntime();
    try {
      const server = runtime.config.mcpServers.fs;
      expect(server?.transport === 'stdio' && server.maxMessageBytes).toBe(DEFAULT_SERVER_MAX_MESSAGE_BYTES);
      const result = await runtime.execute(script(file));
      expect(result.status, JSON.stringify(result.error)).toBe('ok');
      const [chars, lines] = result.stdout.trim().split(' ').map(Number);
      expect(lines).toBe(expectedLines);
      expect(chars).toBeGreaterThanOrEqual(FILE_BYTES);
    } finally {
      await runtime.close();
    }
  });

  it('past maxMessageBytes the script gets an error naming the limit and the key; the server comes back', async () => {
    const limit = 4 * 1_048_576;
    const runtime = await openRuntime({ maxMessageBytes: limit });
    try {
      const result = await runtime.execute(script(file));
      expect(result.status).toBe('error');
      const seen = `${result.stderr}\n${result.error?.message ?? ''}`;
      expect(seen).toContain(`larger than ${limit} bytes`);
      expect(seen).toContain('mcpServers.fs.maxMessageBytes');
      // The connection was reset, not lost: a small read works afterwards.
      writeFileSync(join(dir, 'small.txt'), 'small\n');
      const again = await runtime.execute(script(join(dir, 'small.txt')));
      expect(again.status, JSON.stringify(again.error)).toBe('ok');
      expect(again.stdout.trim()).toBe('6 1');
    } finally {
      await runtime.close();
    }
  });
});
