/**
 * @module
 * The `Mcp-Param-*` headers of a 2026-07-28 `tools/call` (SEP-2243, spec 2026-07-28
 * `basic/transports.mdx` § custom headers): a tool whose `inputSchema` marks a top-level parameter
 * with `x-mcp-header: "<Name>"` has clients send that argument again as the header
 * `Mcp-Param-<Name>` (a `=?base64?…?=` value is Base64 of the UTF-8 value; anything else is the
 * value as is). A request whose header is missing, badly encoded or disagrees with the body is
 * refused with HTTP 400 and `-32020` (HeaderMismatch) before anything runs. The SDK checks this
 * only for tools registered on its `McpServer`; codecall's modern leg lists its own tools, so it
 * checks here, for the pass-through tools whose upstream declared such parameters.
 */
import type { McpHttpHandler } from '@modelcontextprotocol/server';
import {
  primitiveToString,
  scanParamHeaders,
  valueAtPath,
  type ParamHeaderDeclaration,
} from '../tools/index.js';

/** SEP-2243's HeaderMismatch JSON-RPC error code. */
export const HEADER_MISMATCH_CODE = -32020;

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const WRAPPED = /^=\?base64\?(.*)\?=$/s;
/** The declarations of each schema seen, read once (the upstream side's scan: one reading of the SEP). */
const declarationsBySchema = new WeakMap<object, readonly ParamHeaderDeclaration[]>();

function declarationsOf(inputSchema: unknown): readonly ParamHeaderDeclaration[] {
  if (!isObject(inputSchema)) return [];
  let declarations = declarationsBySchema.get(inputSchema);
  if (declarations === undefined) {
    const scan = scanParamHeaders(inputSchema);
    declarations = scan.valid ? scan.declarations : [];
    declarationsBySchema.set(inputSchema, declarations);
  }
  return declarations;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value a header carries: decoded when wrapped in `=?base64?…?=`, undefined when that is not valid Base64. */
function headerValue(raw: string): string | undefined {
  const wrapped = WRAPPED.exec(raw);
  if (!wrapped) return raw;
  const encoded = wrapped[1]!;
  if (encoded.length % 4 !== 0 || !BASE64.test(encoded)) return undefined;
  return Buffer.from(encoded, 'base64').toString('utf8');
}

/**
 * Why the `Mcp-Param-*` headers of a call disagree with its arguments under `inputSchema`, or
 * undefined when they agree (or the schema declares no header).
 */
export function paramHeaderMismatch(
  inputSchema: unknown,
  args: unknown,
  headers: Headers,
): string | undefined {
  for (const { path, headerName: header } of declarationsOf(inputSchema)) {
    const name = path.join('.');
    const sent = headers.get(`mcp-param-${header}`);
    const expected = primitiveToString(valueAtPath(args, path));
    if (sent === null) {
      if (expected !== undefined)
        return `Header Mcp-Param-${header} is missing: the argument "${name}" must be sent in it too (SEP-2243).`;
      continue;
    }
    const decoded = headerValue(sent);
    if (decoded === undefined)
      return `Header Mcp-Param-${header} is not valid Base64 inside =?base64?…?=; send the value as is, or its Base64 (with padding).`;
    if (decoded !== expected)
      return `Header Mcp-Param-${header} does not match the argument "${name}" of the request body; send the same value in both.`;
  }
  return undefined;
}

/**
 * `handler` with the `Mcp-Param-*` check in front of each `tools/call`: `inputSchemaOf` gives the
 * called tool's schema (undefined for a tool without one, or not known).
 */
export function checkingParamHeaders(
  handler: McpHttpHandler,
  inputSchemaOf: (tool: string) => unknown,
): McpHttpHandler {
  const inner = handler.fetch.bind(handler);
  handler.fetch = async (request, options) => {
    const body = options?.parsedBody;
    if (
      isObject(body) &&
      body.method === 'tools/call' &&
      isObject(body.params) &&
      typeof body.params.name === 'string'
    ) {
      const why = paramHeaderMismatch(
        inputSchemaOf(body.params.name),
        body.params.arguments,
        request.headers,
      );
      if (why !== undefined)
        return Response.json(
          {
            jsonrpc: '2.0',
            id: body.id ?? null,
            error: { code: HEADER_MISMATCH_CODE, message: `Bad Request: ${why}` },
          },
          { status: 400 },
        );
    }
    return inner(request, options);
  };
  return handler;
}
