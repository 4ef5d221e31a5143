/**
 * OpenAPI tools (`openApiTools`) against a real loopback HTTP API (node:http): GET with path
 * and query parameters, POST with a JSON body, an error status; called from a sandbox script
 * through `CodecallRuntime` and directly; a cyclic `$ref`; and a hostile document (servers
 * pointing elsewhere, dot-segment path parameters, too many operations, long names).
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/index.js';
import { CodecallError } from '../../../src/errors.js';
import { CodecallRuntime } from '../../../src/execute/index.js';
import { localTools, openApiTools, type LocalTool } from '../../../src/tools/index.js';
import { threadCpuMs } from '../../fixtures/thread-cpu.js';

interface Hit {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
const hits: Hit[] = [];
let server: Server;
let baseUrl: string;

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const SPEC = {
  openapi: '3.0.3',
  info: { title: 'Users', version: '1.0.0' },
  // A document's servers never override the configured baseUrl.
  servers: [{ url: 'http://elsewhere.invalid/api' }],
  paths: {
    '/users/{id}': {
      get: {
        operationId: 'getUser',
        summary: 'Get one user by id.',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'integer' } },
          { name: 'fields', in: 'query', schema: { type: 'string' }, description: 'Comma-separated fields.' },
        ],
        responses: { '200': { description: 'The user.' } },
      },
    },
    '/users': {
      post: {
        operationId: 'create-user',
        description: 'Create a user.',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/NewUser' } } },
        },
        responses: { '201': { description: 'Created.' } },
      },
    },
    '/fail': {
      get: { operationId: 'alwaysFails', responses: { '500': { description: 'Always.' } } },
    },
    '/files/{name}': {
      get: {
        operationId: 'getFile',
        parameters: [
          { name: 'name', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
          { name: 'Authorization', in: 'header', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'Text.' } },
      },
    },
  },
  components: {
    schemas: {
      NewUser: {
        type: 'object',
        required: ['name'],
        properties: { name: { type: 'string' }, nickname: { type: 'string', nullable: true } },
      },
    },
  },
};

beforeAll(async () => {
  server = createServer((request, response) => {
    void readBody(request).then((body) => {
      hits.push({ method: request.method!, url: request.url!, headers: request.headers, body });
      const url = new URL(request.url!, 'http://x');
      const user = /^\/api\/users\/(\d+)$/.exec(url.pathname);
      if (request.method === 'GET' && user) {
        response.setHeader('content-type', 'application/json');
        response.end(
          JSON.stringify({ id: Number(user[1]), name: 'Ada', fields: url.searchParams.get('fields') }),
        );
      } else if (request.method === 'POST' && url.pathname === '/api/users') {
        response.statusCode = 201;
        response.setHeader('content-type', 'application/json; charset=utf-8');
        response.end(JSON.stringify({ created: JSON.parse(body) as unknown }));
      } else if (url.pathname === '/api/fail') {
        response.statusCode = 503;
        response.end(`database unavailable ${'x'.repeat(5_000)}`);
      } else if (url.pathname.startsWith('/api/files/')) {
        response.setHeader('content-type', 'text/plain');
        response.end(`file ${decodeURIComponent(url.pathname.slice('/api/files/'.length))}`);
      } else {
        response.statusCode = 404;
        response.end(`no route ${request.method} ${url.pathname}`);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

function byName(tools: LocalTool[], name: string): LocalTool {
  const tool = tools.find((t) => t.name === name);
  if (tool === undefined) throw new Error(`no tool ${name} in ${tools.map((t) => t.name).join(', ')}`);
  return tool;
}

async function failure(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a failure');
}

describe('openApiTools', () => {
  it('makes one tool per operation: sanitized names, descriptions, parameters and a dereferenced body schema', async () => {
    const tools = await openApiTools(SPEC, { baseUrl });
    expect(tools.map((t) => t.name)).toEqual(['getUser', 'create_user', 'alwaysFails', 'getFile']);
    const get = byName(tools, 'getUser');
    expect(get.description).toMatch(/^Get one user by id\.\n\(GET \/users\/\{id\}\)$/);
    expect(get.inputSchema).toEqual({
      type: 'object',
      properties: {
        id: { type: 'integer' },
        fields: { type: 'string', description: 'Comma-separated fields.' },
      },
      required: ['id'],
    });
    expect(get.annotations?.readOnlyHint).toBe(true);
    expect(byName(tools, 'create_user').inputSchema).toEqual({
      type: 'object',
      properties: {
        body: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, nickname: { type: ['string', 'null'] } },
        },
      },
      required: ['body'],
    });
  });

  it('calls the API at baseUrl (never the document’s servers): path + query, JSON body, text, headers', async () => {
    const tools = await openApiTools(SPEC, { baseUrl, headers: { authorization: 'Bearer t0ken' } });
    hits.length = 0;
    expect(
      await byName(tools, 'getUser').run({ id: 7, fields: 'name,id' }, new AbortController().signal),
    ).toEqual({
      id: 7,
      name: 'Ada',
      fields: 'name,id',
    });
    expect(
      await byName(tools, 'create_user').run(
        { body: { name: 'Grace', nickname: null } },
        new AbortController().signal,
      ),
    ).toEqual({ created: { name: 'Grace', nickname: null } });
    expect(
      await byName(tools, 'getFile').run(
        // A header parameter cannot replace (or join) a configured header.
        { name: 'a b/c.txt', 'X-Trace': 't-1', Authorization: 'Bearer stolen' },
        new AbortController().signal,
      ),
    ).toBe('file a b/c.txt');
    expect(hits.map((h) => `${h.method} ${h.url}`)).toEqual([
      'GET /api/users/7?fields=name%2Cid',
      'POST /api/users',
      'GET /api/files/a%20b%2Fc.txt',
    ]);
    expect(hits[1]!.headers['content-type']).toBe('application/json');
    expect(hits.map((h) => h.headers.authorization)).toEqual([
      'Bearer t0ken',
      'Bearer t0ken',
      'Bearer t0ken',
    ]);
    expect(hits[2]!.headers['x-trace']).toBe('t-1');
  });

  it('a non-2xx status is a tool error with the status and a bounded excerpt of the body', async () => {
    const tools = await openApiTools(SPEC, { baseUrl, errorExcerptChars: 40 });
    const error = await failure(byName(tools, 'alwaysFails').run({}, new AbortController().signal));
    expect((error as Error).message).toMatch(
      /^GET \/fail failed: HTTP 503 Service Unavailable: database unavailable x+…$/,
    );
    expect((error as Error).message.length).toBeLessThan(100);
  });

  it('are called from a sandbox script and directly through CodecallRuntime', async () => {
    const tools = await openApiTools(SPEC, { baseUrl });
    const runtime = await CodecallRuntime.open({
      config: parseConfig({ mcpServers: {}, history: { enabled: false } }, { file: '<openapi-tools.test>' }),
      history: false,
      tools: { transports: { users: localTools(tools) } },
    });
    try {
      const result = await runtime.execute(
        'const user = await tools.users.getUser({ id: 3, fields: "name" });\n' +
          'const made = await tools.users.create_user({ body: { name: user.name + "!" } });\n' +
          'try { await tools.users.alwaysFails({}); } catch (error) { console.log("caught:", error.message); }\n' +
          'console.log(user.id, made.created.name);',
      );
      expect(result.stdout).toMatch(
        /^caught: users\.alwaysFails returned an error: GET \/fail failed: HTTP 503 Service Unavailable: database unavailable x+…\n3 Ada!\n$/,
      );
      expect(result.toolCalls.map((call) => [call.tool, call.ok])).toEqual([
        ['users.getUser', true],
        ['users.create_user', true],
        ['users.alwaysFails', false],
      ]);
      // Host-side validation from the generated schema: a string id is refused before any request.
      hits.length = 0;
      const bad = await runtime.execute('await tools.users.getUser({ id: "seven" });');
      expect(bad.error?.message).toMatch(/id/);
      expect(hits).toEqual([]);
      expect(await runtime.callTool('users.getUser', { id: 9 })).toEqual({
        id: 9,
        name: 'Ada',
        fields: null,
      });
    } finally {
      await runtime.close();
    }
  });

  it('a cyclic $ref becomes a finite schema; the tool works', async () => {
    const spec = {
      openapi: '3.1.0',
      info: { title: 'Tree', version: '1' },
      paths: {
        '/tree': {
          post: {
            operationId: 'echoTree',
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } },
            },
            responses: { '200': { description: 'ok' } },
          },
        },
      },
      components: {
        schemas: {
          Node: {
            type: 'object',
            properties: {
              label: { type: 'string' },
              children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
            },
          },
        },
      },
    };
    const [tool] = await openApiTools(spec, { baseUrl });
    const text = JSON.stringify(tool!.inputSchema);
    expect(text.length).toBeLessThan(1_000);
    expect(tool!.inputSchema).toMatchObject({
      properties: {
        body: {
          properties: { children: { items: { description: expect.stringMatching(/^Recursive/) } } },
        },
      },
    });
    const error = await failure(
      tool!.run({ body: { label: 'root', children: [] } }, new AbortController().signal),
    );
    expect((error as Error).message).toMatch(
      /^POST \/tree failed: HTTP 404 Not Found: no route POST \/api\/tree$/,
    );
  });

  it('keeps every request under the base path as whole segments, dot segments resolved', async () => {
    const signal = new AbortController().signal;
    const escapes = [
      '/../api-admin/secret',
      '/%2e%2e/api-admin/secret',
      '/%2E%2E/api-admin/secret',
      '/.%2e/api-admin/secret',
      '/./../api-admin/secret',
      '/x/../../api-admin/secret',
      '/../apix',
      '/../',
    ];
    const spec = {
      openapi: '3.0.3',
      info: { title: 'Escapes', version: '1' },
      paths: {
        ...Object.fromEntries(
          escapes.map((path, index) => [
            path,
            { get: { operationId: `escape${index}`, responses: { '200': { description: 'ok' } } } },
          ]),
        ),
        '/x/../files/{name}': {
          get: {
            operationId: 'inside',
            parameters: [{ name: 'name', in: 'path', required: true, schema: { type: 'string' } }],
            responses: { '200': { description: 'ok' } },
          },
        },
      },
    };
    const tools = await openApiTools(spec, { baseUrl, headers: { authorization: 'Bearer t0ken' } });
    hits.length = 0;
    for (let index = 0; index < escapes.length; index++) {
      const error = await failure(byName(tools, `escape${index}`).run({}, signal));
      expect((error as Error).message, escapes[index]).toMatch(/^Refusing a request outside baseUrl/);
    }
    expect(hits).toEqual([]);
    // Dot segments that stay under the base path are resolved, not refused.
    expect(await byName(tools, 'inside').run({ name: 'a.txt' }, signal)).toBe('file a.txt');
    expect(hits.map((hit) => hit.url)).toEqual(['/api/files/a.txt']);
  });

  it('refuses hostile documents and inputs with errors naming the field', async () => {
    const signal = new AbortController().signal;
    const tools = await openApiTools(SPEC, { baseUrl });
    hits.length = 0;
    for (const name of ['..', '.']) {
      const error = await failure(byName(tools, 'getFile').run({ name }, signal));
      expect((error as Error).message).toMatch(/must not be empty, "\." or "\.\."/);
    }
    expect(hits).toEqual([]);

    const many = {
      openapi: '3.0.3',
      info: { title: 'Many', version: '1' },
      paths: Object.fromEntries(
        Array.from({ length: 5 }, (_, i) => [
          `/op${i}`,
          { get: { operationId: `${'x'.repeat(300)}`, responses: { '200': { description: 'ok' } } } },
        ]),
      ),
    };
    const tooMany = await failure(openApiTools(many, { baseUrl, maxTools: 4 }));
    expect(CodecallError.isInstance(tooMany, 'INVALID_ARGUMENT') && tooMany.details.field).toBe('maxTools');
    const names = (await openApiTools(many, { baseUrl, maxToolNameChars: 20 })).map((t) => t.name);
    expect(names).toEqual([
      'x'.repeat(20),
      `${'x'.repeat(18)}_2`,
      `${'x'.repeat(18)}_3`,
      `${'x'.repeat(18)}_4`,
      `${'x'.repeat(18)}_5`,
    ]);
    const big = await failure(openApiTools(SPEC, { baseUrl, maxSchemaNodes: 2 }));
    expect(CodecallError.isInstance(big, 'INVALID_ARGUMENT') && big.details.field).toBe('maxSchemaNodes');
    // Exponential fan-out through shared $refs (L21 → two L20s → … : 2^22 nodes expanded) stops at the bound.
    const levels: Record<string, unknown> = { L0: { type: 'string' } };
    for (let i = 1; i <= 21; i++) {
      const ref = { $ref: `#/components/schemas/L${i - 1}` };
      levels[`L${i}`] = { type: 'object', properties: { a: ref, b: ref } };
    }
    const bomb = {
      openapi: '3.0.3',
      info: { title: 'Bomb', version: '1' },
      paths: {
        '/bomb': {
          post: {
            operationId: 'bomb',
            requestBody: {
              content: { 'application/json': { schema: { $ref: '#/components/schemas/L21' } } },
            },
            responses: { '200': { description: 'ok' } },
          },
        },
      },
      components: { schemas: levels },
    };
    // CPU of this thread, where the expansion runs: a loaded machine stretches wall time, not CPU.
    const started = threadCpuMs();
    const exploded = await failure(openApiTools(bomb, { baseUrl }));
    expect(exploded).toMatchObject({
      details: { field: 'maxSchemaNodes' },
      message: expect.stringMatching(/POST \/bomb/),
    });
    expect(threadCpuMs() - started).toBeLessThan(5_000);

    const attempt = (spec: unknown, url = baseUrl) => failure(openApiTools(spec, { baseUrl: url }));
    expect(await attempt(SPEC, 'ftp://127.0.0.1/')).toMatchObject({ details: { field: 'baseUrl' } });
    expect(await attempt(SPEC, `${baseUrl}?key=1`)).toMatchObject({ details: { field: 'baseUrl' } });
    expect(await attempt({ swagger: '2.0' })).toMatchObject({ details: { field: 'spec.openapi' } });
    expect(await attempt('https://example.com/openapi.json')).toMatchObject({ details: { field: 'spec' } });
    expect(
      await attempt({
        ...SPEC,
        components: { schemas: { NewUser: { $ref: '#/components/schemas/Missing' } } },
      }),
    ).toMatchObject({
      details: { field: 'spec' },
      message: expect.stringMatching(/not valid OpenAPI/),
    });
    // An external $ref (a file here; the parser's own guard already refuses loopback URLs) is never read.
    const dir = mkdtempSync(join(tmpdir(), 'codecall-openapi-'));
    try {
      const file = join(dir, 'secret.json');
      writeFileSync(file, JSON.stringify({ type: 'object', description: 'SECRET FROM DISK' }));
      const external = { ...SPEC, components: { schemas: { NewUser: { $ref: file } } } };
      const outcome = await openApiTools(external, { baseUrl }).catch((error: unknown) => error);
      expect(
        JSON.stringify(outcome, (_key, value: unknown) => (value instanceof Error ? value.message : value)),
      ).not.toMatch(/SECRET FROM DISK/);
      expect(outcome).toMatchObject({ details: { field: 'spec' } });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
