/**
 * @module
 * An OpenAPI 3.x document as a source of local tools: {@link openApiTools} turns each operation
 * into a {@link LocalTool} (name from `operationId`, input from path/query/header parameters and
 * a JSON request body, `execute` an HTTP request with `fetch`), to serve with `localTools`.
 *
 * `@apidevtools/json-schema-ref-parser` expands the document's `$ref`s (internal ones
 * only: external files and URLs are never fetched); it loads lazily, on the first call.
 *
 * The document is untrusted: tool count, name length, description length, schema size and the
 * response size are bounded by named defaults, cyclic schemas are cut (a repeated schema becomes
 * "any value"), and requests only ever go to the `baseUrl` the caller gives — the document's
 * `servers` are ignored, and a path parameter cannot step out of the base path.
 */
import {
  DEFAULT_OPENAPI_ERROR_EXCERPT_CHARS,
  DEFAULT_OPENAPI_MAX_DESCRIPTION_CHARS,
  DEFAULT_OPENAPI_MAX_RESPONSE_BYTES,
  DEFAULT_OPENAPI_MAX_SCHEMA_NODES,
  DEFAULT_OPENAPI_MAX_SPEC_BYTES,
  DEFAULT_OPENAPI_MAX_TOOL_NAME_CHARS,
  DEFAULT_OPENAPI_MAX_TOOLS,
} from '../config/defaults.js';
import { CodecallError } from '../errors.js';
import type { JsonSchema } from '../types.js';
import { defineTool, type LocalTool } from './local-tools.js';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
type Method = (typeof METHODS)[number];

/** One operation of the document, as `include` sees it. */
export interface OpenApiOperationInfo {
  /** The operation's `operationId`, when it has one. */
  operationId?: string;
  /** Upper-case HTTP method (`GET`, `POST`…). */
  method: string;
  /** The path template (`/users/{id}`). */
  path: string;
  tags: string[];
}

/** What {@link openApiTools} takes besides the document. */
export interface OpenApiToolsOptions {
  /**
   * Where requests go (`https://api.example.com/v1`): the only origin the tools call. The
   * document's `servers` are ignored, so a document cannot point the tools elsewhere.
   */
  baseUrl: string;
  /** Headers sent with every request (auth); they win over header parameters of the same name. */
  headers?: Record<string, string>;
  /** Which operations become tools: `operationId`s (or `"GET /path"`), or a predicate. Default: all. */
  include?: readonly string[] | ((operation: OpenApiOperationInfo) => boolean);
  /** The `fetch` to call (default: the global one). */
  fetch?: typeof fetch;
  /** At most this many tools; more is an error naming `include` ({@link DEFAULT_OPENAPI_MAX_TOOLS}). */
  maxTools?: number;
  /** Tool name length ({@link DEFAULT_OPENAPI_MAX_TOOL_NAME_CHARS}). */
  maxToolNameChars?: number;
  /** Description length ({@link DEFAULT_OPENAPI_MAX_DESCRIPTION_CHARS}). */
  maxDescriptionChars?: number;
  /** Schema nodes of one tool's input ({@link DEFAULT_OPENAPI_MAX_SCHEMA_NODES}). */
  maxSchemaNodes?: number;
  /** Serialized size of the document ({@link DEFAULT_OPENAPI_MAX_SPEC_BYTES}). */
  maxSpecBytes?: number;
  /** Bytes of one response body read ({@link DEFAULT_OPENAPI_MAX_RESPONSE_BYTES}). */
  maxResponseBytes?: number;
  /** Characters of an error response quoted in the tool error ({@link DEFAULT_OPENAPI_ERROR_EXCERPT_CHARS}). */
  errorExcerptChars?: number;
}

type Obj = Record<string, unknown>;

function invalid(field: string, message: string, value?: unknown): CodecallError<'INVALID_ARGUMENT'> {
  return new CodecallError('INVALID_ARGUMENT', message, {
    details: { field, ...(value !== undefined ? { value } : {}) },
  });
}

function isObj(value: unknown): value is Obj {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseBaseUrl(raw: unknown): URL {
  let url: URL;
  try {
    url = new URL(String(raw));
  } catch {
    throw invalid(
      'baseUrl',
      `openApiTools: baseUrl must be an absolute http(s) URL, got ${JSON.stringify(raw)}.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid('baseUrl', `openApiTools: baseUrl must be http: or https:, got ${url.protocol}.`, raw);
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw invalid(
      'baseUrl',
      'openApiTools: baseUrl must not carry a query, fragment or credentials; pass credentials in headers.',
      raw,
    );
  }
  return url;
}

/** A JS-identifier-friendly tool name, unique among `taken`, at most `max` characters. */
function toolName(raw: string, taken: Set<string>, max: number): string {
  let base = raw.replace(/[^A-Za-z0-9_]+/g, '_').replace(/^_+|_+$/g, '');
  if (base === '') base = 'operation';
  base = base.slice(0, max);
  let name = base;
  for (let n = 2; taken.has(name); n++) {
    const suffix = `_${n}`;
    name = base.slice(0, max - suffix.length) + suffix;
  }
  taken.add(name);
  return name;
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, Math.max(0, max - 1))}…`;
}

/** OpenAPI-only keywords that are not JSON Schema. */
const DROP = new Set(['discriminator', 'xml', 'externalDocs', 'example']);

/**
 * A plain, acyclic JSON Schema copy of a dereferenced OpenAPI schema: a schema that contains
 * itself becomes `{}` (any value) at the repeat, OpenAPI 3.0 `nullable` becomes a `null` type,
 * and more than `budget.left` nodes is an error.
 */
function toJsonSchema(
  schema: unknown,
  budget: { left: number },
  ancestors: Set<object>,
  where: string,
): unknown {
  if (Array.isArray(schema)) {
    if (ancestors.has(schema)) return [];
    ancestors.add(schema);
    const out = schema.map((item) => toJsonSchema(item, budget, ancestors, where));
    ancestors.delete(schema);
    return out;
  }
  if (!isObj(schema)) return schema;
  if (ancestors.has(schema)) return { description: 'Recursive: the same shape as an enclosing value.' };
  if (--budget.left < 0) {
    throw invalid(
      'maxSchemaNodes',
      `openApiTools: the input schema of ${where} is larger than maxSchemaNodes; raise maxSchemaNodes or leave the operation out with include.`,
    );
  }
  if (typeof schema.$ref === 'string') {
    throw invalid(
      'spec',
      `openApiTools: ${where} uses $ref ${JSON.stringify(truncate(schema.$ref, 200))}, which is not in the document; only internal references ("#/components/…") are resolved — bundle external files into the document first.`,
    );
  }
  ancestors.add(schema);
  const out: Obj = {};
  for (const [key, value] of Object.entries(schema)) {
    if (DROP.has(key) || key === 'nullable' || key.startsWith('x-')) continue;
    // Property names are data, not schemas; copy the map with each value converted.
    out[key] = toJsonSchema(value, budget, ancestors, where);
  }
  ancestors.delete(schema);
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
}

interface Operation {
  method: Method;
  path: string;
  parameters: Parameter[];
  /** The input property that carries the JSON body, when the operation takes one. */
  bodyKey?: string;
}

async function readBounded(response: Response, maxBytes: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw new Error(`The response is ${declared} bytes, more than maxResponseBytes (${maxBytes}).`);
  }
  if (response.body === null) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new Error(`The response is more than maxResponseBytes (${maxBytes}) bytes.`);
    }
    chunks.push(value);
  }
  return new TextDecoder().decode(Buffer.concat(chunks));
}

function isJson(contentType: string | null): boolean {
  return contentType !== null && /^application\/([\w.+-]*\+)?json\b/i.test(contentType);
}

/**
 * Local tools for the operations of an OpenAPI 3.x document (an object; load a file or URL
 * yourself). Each tool's input has the operation's path, query and header parameters by name
 * and, for a JSON request body, `body`; it returns the response as JSON (or text), and a
 * non-2xx status is a tool error quoting the status and the start of the body.
 *
 * Throws `INVALID_ARGUMENT` for a bad `baseUrl`, a document that is not valid OpenAPI 3.x, or a
 * bound exceeded (naming the option to change).
 *
 * @example
 * ```ts
 * const spec = JSON.parse(await readFile('petstore.json', 'utf8'));
 * const pets = await openApiTools(spec, { baseUrl: 'https://petstore.example.com/v1' });
 * const runtime = await CodecallRuntime.open({ tools: { transports: { pets: localTools(pets) } } });
 * ```
 */
export async function openApiTools(spec: unknown, options: OpenApiToolsOptions): Promise<LocalTool[]> {
  const base = parseBaseUrl(options?.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const maxTools = options.maxTools ?? DEFAULT_OPENAPI_MAX_TOOLS;
  const maxNameChars = Math.max(8, options.maxToolNameChars ?? DEFAULT_OPENAPI_MAX_TOOL_NAME_CHARS);
  const maxDescriptionChars = options.maxDescriptionChars ?? DEFAULT_OPENAPI_MAX_DESCRIPTION_CHARS;
  const maxSchemaNodes = options.maxSchemaNodes ?? DEFAULT_OPENAPI_MAX_SCHEMA_NODES;
  const maxSpecBytes = options.maxSpecBytes ?? DEFAULT_OPENAPI_MAX_SPEC_BYTES;
  const maxResponseBytes = options.maxResponseBytes ?? DEFAULT_OPENAPI_MAX_RESPONSE_BYTES;
  const excerptChars = options.errorExcerptChars ?? DEFAULT_OPENAPI_ERROR_EXCERPT_CHARS;
  const doFetch = options.fetch ?? globalThis.fetch;
  const fixedHeaders = { ...options.headers };

  if (!isObj(spec)) {
    throw invalid(
      'spec',
      'openApiTools: spec must be an OpenAPI document object; read and parse the file or URL first.',
    );
  }
  let text: string;
  try {
    text = JSON.stringify(spec);
  } catch (error) {
    throw invalid('spec', `openApiTools: spec must be plain JSON data (${(error as Error).message}).`);
  }
  if (Buffer.byteLength(text) > maxSpecBytes) {
    throw invalid(
      'maxSpecBytes',
      `openApiTools: the document is larger than maxSpecBytes (${maxSpecBytes}); raise maxSpecBytes to accept it.`,
    );
  }
  if (typeof spec.openapi !== 'string' || !/^3\./.test(spec.openapi)) {
    throw invalid(
      'spec.openapi',
      'openApiTools: only OpenAPI 3.x documents are supported (spec.openapi "3.x.y").',
      spec.openapi,
    );
  }

  const { dereference } = await import('@apidevtools/json-schema-ref-parser');
  let api: Obj;
  try {
    // A copy: the parser dereferences in place. External $refs are never resolved (no file or
    // network access on behalf of an untrusted document). Not `@apidevtools/swagger-parser`'s `validate`: it walks the expanded
    // document, exponential in nested shared $refs (18 s for a 22-level fan-out, blocking the
    // event loop); `dereference` keeps shared objects shared (55 ms), and the walk below is bounded.
    api = (await dereference(JSON.parse(text) as never, {
      resolve: { external: false },
      dereference: { circular: true },
    })) as unknown as Obj;
  } catch (error) {
    throw invalid(
      'spec',
      `openApiTools: the document is not valid OpenAPI: ${truncate((error as Error).message, 1_000)}`,
    );
  }

  const include = options.include;
  const wanted = (info: OpenApiOperationInfo): boolean => {
    if (include === undefined) return true;
    if (typeof include === 'function') return include(info);
    return (
      (info.operationId !== undefined && include.includes(info.operationId)) ||
      include.includes(`${info.method} ${info.path}`)
    );
  };

  const taken = new Set<string>();
  const tools: LocalTool[] = [];
  const paths = isObj(api.paths) ? api.paths : {};
  for (const [path, item] of Object.entries(paths)) {
    if (!isObj(item)) continue;
    if (!path.startsWith('/')) {
      throw invalid(
        'spec.paths',
        `openApiTools: path ${JSON.stringify(truncate(path, 100))} must start with "/".`,
      );
    }
    const shared = Array.isArray(item.parameters) ? item.parameters : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObj(op)) continue;
      const operationId = typeof op.operationId === 'string' ? op.operationId : undefined;
      const info: OpenApiOperationInfo = {
        ...(operationId !== undefined ? { operationId } : {}),
        method: method.toUpperCase(),
        path,
        tags: Array.isArray(op.tags) ? op.tags.filter((t): t is string => typeof t === 'string') : [],
      };
      if (!wanted(info)) continue;
      if (tools.length >= maxTools) {
        throw invalid(
          'maxTools',
          `openApiTools: the document has more than maxTools (${maxTools}) operations; pick the ones you need with include, or raise maxTools.`,
        );
      }
      const where = `${info.method} ${truncate(path, 200)}`;
      const budget = { left: maxSchemaNodes };
      // Operation parameters override path-level ones with the same name and location.
      const byKey = new Map<string, Obj>();
      for (const p of [...shared, ...(Array.isArray(op.parameters) ? op.parameters : [])]) {
        if (isObj(p) && typeof p.name === 'string' && typeof p.in === 'string')
          byKey.set(`${p.in}:${p.name}`, p);
      }
      const properties: Obj = {};
      const required: string[] = [];
      const parameters: Parameter[] = [];
      for (const p of byKey.values()) {
        const location = p.in as string;
        if (location !== 'path' && location !== 'query' && location !== 'header') continue;
        const name = p.name as string;
        if (Object.hasOwn(properties, name)) {
          throw invalid(
            'spec.paths',
            `openApiTools: ${where} has two parameters named "${truncate(name, 100)}"; leave it out with include.`,
          );
        }
        const converted = toJsonSchema(p.schema ?? {}, budget, new Set(), where);
        const schema: Obj = isObj(converted) ? converted : {};
        if (typeof p.description === 'string' && schema.description === undefined) {
          schema.description = truncate(p.description, maxDescriptionChars);
        }
        properties[name] = schema;
        const isRequired = location === 'path' || p.required === true;
        if (isRequired) required.push(name);
        parameters.push({ name, in: location, required: isRequired });
      }
      let bodyKey: string | undefined;
      const body = isObj(op.requestBody) ? op.requestBody : undefined;
      const content = body && isObj(body.content) ? body.content : undefined;
      const jsonType = content && Object.keys(content).find((type) => isJson(type));
      if (content && jsonType !== undefined) {
        bodyKey = ['body', 'requestBody', '_body'].find((key) => !Object.hasOwn(properties, key));
        if (bodyKey === undefined) {
          throw invalid(
            'spec.paths',
            `openApiTools: ${where} has no free input name for its request body; leave it out with include.`,
          );
        }
        const media = content[jsonType];
        properties[bodyKey] = toJsonSchema(
          isObj(media) ? (media.schema ?? {}) : {},
          budget,
          new Set(),
          where,
        );
        if (body?.required === true) required.push(bodyKey);
      }
      const inputSchema: JsonSchema = {
        type: 'object',
        properties,
        ...(required.length > 0 ? { required } : {}),
      } as JsonSchema;
      const described = [op.summary, op.description].filter(
        (s): s is string => typeof s === 'string' && s.trim() !== '',
      );
      const description = truncate(
        `${described.join('\n\n') || 'No description.'}\n(${where})`,
        maxDescriptionChars,
      );
      const operation: Operation = {
        method,
        path,
        parameters,
        ...(bodyKey !== undefined ? { bodyKey } : {}),
      };
      tools.push(
        defineTool({
          name: toolName(operationId ?? `${method}_${path}`, taken, maxNameChars),
          description,
          inputSchema,
          annotations: { readOnlyHint: method === 'get' || method === 'head', openWorldHint: true },
          execute: (input, { signal }) => call(operation, input, signal),
        }),
      );
    }
  }

  async function call(operation: Operation, input: Obj, signal: AbortSignal): Promise<unknown> {
    let path = operation.path;
    const query = new URLSearchParams();
    const headers: Record<string, string> = {};
    for (const p of operation.parameters) {
      const value = input[p.name];
      if (value === undefined || value === null) {
        if (p.required) throw new Error(`Missing required ${p.in} parameter "${p.name}".`);
        continue;
      }
      const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
      if (p.in === 'path') {
        // "." and ".." (even percent-encoded) are dot segments to a URL parser: they would step out of the path.
        if (text === '.' || text === '..' || text === '') {
          throw new Error(`Path parameter "${p.name}" must not be empty, "." or "..".`);
        }
        path = path.split(`{${p.name}}`).join(encodeURIComponent(text));
      } else if (p.in === 'query') {
        for (const item of Array.isArray(value) ? value : [value]) {
          query.append(p.name, typeof item === 'object' ? JSON.stringify(item) : String(item));
        }
      } else {
        headers[p.name.toLowerCase()] = text;
      }
    }
    const search = query.size > 0 ? `?${query.toString()}` : '';
    // The URL parser resolves "." and ".." segments, "%2e" spellings included; the result must
    // stay on the origin and under the base path as whole segments ("/v1" never admits "/v1-admin").
    const url = new URL(`${base.origin}${basePath}${path}${search}`);
    const underBase = basePath === '' || url.pathname === basePath || url.pathname.startsWith(`${basePath}/`);
    if (url.origin !== base.origin || !underBase) {
      throw new Error(`Refusing a request outside baseUrl (${base.href}).`);
    }
    // Header names are case-insensitive: the configured ones replace a parameter's, never join it.
    for (const [name, value] of Object.entries(fixedHeaders)) headers[name.toLowerCase()] = value;
    let requestBody: string | undefined;
    if (operation.bodyKey !== undefined && input[operation.bodyKey] !== undefined) {
      requestBody = JSON.stringify(input[operation.bodyKey]);
      headers['content-type'] = 'application/json';
    }
    headers.accept ??= 'application/json, text/plain;q=0.9, */*;q=0.5';
    const response = await doFetch(url, {
      method: operation.method.toUpperCase(),
      headers,
      signal,
      redirect: 'manual',
      ...(requestBody !== undefined ? { body: requestBody } : {}),
    });
    const text = await readBounded(response, maxResponseBytes);
    const where = `${operation.method.toUpperCase()} ${operation.path}`;
    if (!response.ok) {
      const excerpt = truncate(text.trim(), excerptChars);
      throw new Error(
        `${where} failed: HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${excerpt ? `: ${excerpt}` : ''}`,
      );
    }
    if (text === '') return null;
    if (isJson(response.headers.get('content-type'))) {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return text;
      }
    }
    return text;
  }

  return tools;
}
