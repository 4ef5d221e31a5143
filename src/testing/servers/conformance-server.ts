/**
 * @module
 * An upstream MCP server offering what the `@modelcontextprotocol/conformance` server scenarios
 * call (tools `test_simple_text`, `test_image_content`, …, resources `test://static-text`, …, the
 * template `test://template/{id}/data`, prompts `test_simple_prompt`, …, completion and logging),
 * written from the scenarios' descriptions. Put `codecall serve --http` (with
 * `serve.originalNames`) in front of it and the suite exercises the gateway's pass-through.
 *
 * Beyond the scenarios, for codecall's own tests: `resources/list` is paginated
 * (`resourcePageSize`), and the tool `touch_watched_resource` sends
 * `notifications/resources/updated` for `test://watched-resource` to a subscribed client.
 *
 * The 2026 suite's diagnostic hooks `test_trigger_tool_change` and `test_trigger_prompt_change`
 * add (or take away again) the tool `test_dynamic_tool` or the prompt `test_dynamic_prompt` and
 * send `notifications/tools/list_changed` or `notifications/prompts/list_changed`: codecall follows
 * a 2025-11-25 upstream's list changes as they happen, so its own list changes for its clients.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type CallToolResult,
  type GetPromptResult,
  type ReadResourceResult,
  type Resource,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

/** A 1×1 red PNG. */
export const CONFORMANCE_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';

/** A short silent 8 kHz mono 8-bit WAV. */
function silentWavBase64(samples = 80): string {
  const data = Buffer.alloc(samples, 128);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write('data', 36);
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]).toString('base64');
}

/** Options of {@link createConformanceServer}. */
export interface ConformanceServerOptions {
  /** Resources per `resources/list` page. @defaultValue 2 */
  resourcePageSize?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const NO_ARGS = { type: 'object', properties: {} } as const;

const TOOLS: Tool[] = [
  { name: 'test_simple_text', description: 'Returns a simple text.', inputSchema: NO_ARGS },
  { name: 'test_image_content', description: 'Returns a PNG image.', inputSchema: NO_ARGS },
  { name: 'test_audio_content', description: 'Returns a WAV clip.', inputSchema: NO_ARGS },
  { name: 'test_embedded_resource', description: 'Returns an embedded resource.', inputSchema: NO_ARGS },
  {
    name: 'test_multiple_content_types',
    description: 'Returns text, image and resource.',
    inputSchema: NO_ARGS,
  },
  { name: 'test_tool_with_logging', description: 'Logs three messages while it runs.', inputSchema: NO_ARGS },
  { name: 'test_tool_with_progress', description: 'Reports progress 0, 50, 100.', inputSchema: NO_ARGS },
  { name: 'test_error_handling', description: 'Always fails.', inputSchema: NO_ARGS },
  {
    name: 'test_sampling',
    description: 'Asks the client for a completion.',
    inputSchema: { type: 'object', properties: { prompt: { type: 'string' } }, required: ['prompt'] },
  },
  {
    name: 'test_elicitation',
    description: 'Asks the user for a username and email.',
    inputSchema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  },
  {
    name: 'test_elicitation_sep1034_defaults',
    description: 'Elicitation with defaults.',
    inputSchema: NO_ARGS,
  },
  {
    name: 'test_elicitation_sep1330_enums',
    description: 'Elicitation with enum forms.',
    inputSchema: NO_ARGS,
  },
  {
    name: 'json_schema_2020_12_tool',
    description: 'Tool with JSON Schema 2020-12 features',
    inputSchema: {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      // The 0.2.0-alpha suite's schema (SEP-2106: $anchor, allOf/anyOf, if/then/else), a superset
      // of the 0.1.16 suite's.
      $defs: {
        address: {
          $anchor: 'addressDef',
          type: 'object',
          properties: { street: { type: 'string' }, city: { type: 'string' } },
        },
      },
      properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' },
      },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    },
  },
  {
    name: 'touch_watched_resource',
    description: 'Notifies subscribers of test://watched-resource.',
    inputSchema: NO_ARGS,
  },
  {
    name: 'test_trigger_tool_change',
    description: 'Adds test_dynamic_tool (or takes it away again) and sends tools/list_changed.',
    inputSchema: NO_ARGS,
  },
  {
    name: 'test_trigger_prompt_change',
    description: 'Adds test_dynamic_prompt (or takes it away again) and sends prompts/list_changed.',
    inputSchema: NO_ARGS,
  },
];

const RESOURCES: Resource[] = [
  {
    uri: 'test://static-text',
    name: 'static-text',
    description: 'A static text resource.',
    mimeType: 'text/plain',
  },
  { uri: 'test://static-binary', name: 'static-binary', description: 'A static PNG.', mimeType: 'image/png' },
  {
    uri: 'test://watched-resource',
    name: 'watched-resource',
    description: 'A resource to subscribe to.',
    mimeType: 'text/plain',
  },
];

const PROMPTS = [
  { name: 'test_simple_prompt', description: 'A prompt without arguments.' },
  {
    name: 'test_prompt_with_arguments',
    description: 'A prompt with two arguments.',
    arguments: [
      { name: 'arg1', description: 'First test argument', required: true },
      { name: 'arg2', description: 'Second test argument', required: true },
    ],
  },
  {
    name: 'test_prompt_with_embedded_resource',
    description: 'A prompt embedding a resource.',
    arguments: [{ name: 'resourceUri', description: 'URI of the resource to embed', required: true }],
  },
  { name: 'test_prompt_with_image', description: 'A prompt with an image.' },
];

const COMPLETIONS = ['paris', 'park', 'party', 'test', 'testing'];

/** What `test_trigger_tool_change` adds and takes away again. */
const DYNAMIC_TOOL: Tool = {
  name: 'test_dynamic_tool',
  description: 'Listed only while test_trigger_tool_change has added it.',
  inputSchema: NO_ARGS,
};
/** What `test_trigger_prompt_change` adds and takes away again. */
const DYNAMIC_PROMPT = { name: 'test_dynamic_prompt', description: 'Listed only while added.' };

/**
 * Creates the conformance fixture server (an SDK `Server`; connect it to any transport). The
 * tools `test_sampling` and `test_elicitation*` ask the client and fail when it cannot answer.
 *
 * @example
 * ```ts
 * const server = createConformanceServer();
 * await server.connect(new StdioServerTransport());
 * ```
 */
export function createConformanceServer(options: ConformanceServerOptions = {}): Server {
  const pageSize = Math.max(1, options.resourcePageSize ?? 2);
  const server = new Server(
    { name: 'conformance-fixture', version: '1.0.0' },
    {
      capabilities: {
        tools: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        prompts: { listChanged: true },
        completions: {},
        logging: {},
      },
    },
  );
  const subscribed = new Set<string>();
  // The lists the trigger hooks change (per server instance).
  let dynamicTool = false;
  let dynamicPrompt = false;

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: dynamicTool ? [...TOOLS, DYNAMIC_TOOL] : TOOLS,
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const text = (value: string): CallToolResult => ({ content: [{ type: 'text', text: value }] });
    switch (request.params.name) {
      case 'test_simple_text':
        return text('This is a simple text response for testing.');
      case 'test_image_content':
        return { content: [{ type: 'image', data: CONFORMANCE_PNG_BASE64, mimeType: 'image/png' }] };
      case 'test_audio_content':
        return { content: [{ type: 'audio', data: silentWavBase64(), mimeType: 'audio/wav' }] };
      case 'test_embedded_resource':
        return {
          content: [
            {
              type: 'resource',
              resource: {
                uri: 'test://embedded-resource',
                mimeType: 'text/plain',
                text: 'This is an embedded resource content.',
              },
            },
          ],
        };
      case 'test_multiple_content_types':
        return {
          content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: CONFORMANCE_PNG_BASE64, mimeType: 'image/png' },
            {
              type: 'resource',
              resource: {
                uri: 'test://mixed-content-resource',
                mimeType: 'application/json',
                text: JSON.stringify({ test: 'data', value: 123 }),
              },
            },
          ],
        };
      case 'test_tool_with_logging':
        for (const [i, data] of [
          'Tool execution started',
          'Tool processing data',
          'Tool execution completed',
        ].entries()) {
          if (i > 0) await sleep(50);
          await server.sendLoggingMessage({ level: 'info', logger: 'conformance', data });
        }
        return text('Tool with logging executed successfully');
      case 'test_tool_with_progress': {
        const token = request.params._meta?.progressToken;
        for (const [i, progress] of [0, 50, 100].entries()) {
          if (i > 0) await sleep(50);
          if (token !== undefined)
            await extra.sendNotification({
              method: 'notifications/progress',
              params: { progressToken: token, progress, total: 100 },
            });
        }
        return text('Tool with progress executed successfully');
      }
      case 'test_error_handling':
        return {
          isError: true,
          content: [{ type: 'text', text: 'This tool intentionally returns an error for testing' }],
        };
      case 'test_sampling': {
        const result = await extra.sendRequest(
          {
            method: 'sampling/createMessage',
            params: {
              messages: [{ role: 'user', content: { type: 'text', text: String(args.prompt ?? '') } }],
              maxTokens: 100,
            },
          },
          CreateMessageResultSchema,
        );
        const content = result.content as { type: string; text?: string };
        return text(`LLM response: ${content.type === 'text' ? content.text : `[${content.type}]`}`);
      }
      case 'test_elicitation':
      case 'test_elicitation_sep1034_defaults':
      case 'test_elicitation_sep1330_enums': {
        const requestedSchema = elicitationSchema(request.params.name);
        const result = await extra.sendRequest(
          {
            method: 'elicitation/create',
            params: { message: String(args.message ?? 'Please answer'), requestedSchema },
          },
          ElicitResultSchema,
        );
        const prefix = request.params.name === 'test_elicitation' ? 'User response' : 'Elicitation completed';
        return text(`${prefix}: action=${result.action}, content=${JSON.stringify(result.content ?? {})}`);
      }
      case 'json_schema_2020_12_tool':
        return text(`Received ${JSON.stringify(args)}`);
      case 'touch_watched_resource':
        if (subscribed.has('test://watched-resource'))
          await server.sendResourceUpdated({ uri: 'test://watched-resource' });
        return text(subscribed.has('test://watched-resource') ? 'notified' : 'nobody subscribed');
      case 'test_trigger_tool_change':
        dynamicTool = !dynamicTool;
        await server.sendToolListChanged();
        return text(`${DYNAMIC_TOOL.name} ${dynamicTool ? 'added' : 'removed'}`);
      case 'test_trigger_prompt_change':
        dynamicPrompt = !dynamicPrompt;
        await server.sendPromptListChanged();
        return text(`${DYNAMIC_PROMPT.name} ${dynamicPrompt ? 'added' : 'removed'}`);
      case 'test_dynamic_tool':
        if (dynamicTool) return text('The dynamic tool ran.');
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}`);
      default:
        throw new McpError(ErrorCode.InvalidParams, `Unknown tool ${request.params.name}`);
    }
  });

  server.setRequestHandler(ListResourcesRequestSchema, (request) => {
    const start = request.params?.cursor === undefined ? 0 : Number(request.params.cursor);
    if (!Number.isInteger(start) || start < 0 || start >= RESOURCES.length)
      throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor');
    const end = start + pageSize;
    return {
      resources: RESOURCES.slice(start, end),
      ...(end < RESOURCES.length ? { nextCursor: String(end) } : {}),
    };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: 'test://template/{id}/data',
        name: 'template',
        description: 'Data by id.',
        mimeType: 'application/json',
      },
    ],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, (request): ReadResourceResult => {
    const uri = request.params.uri;
    if (uri === 'test://static-text')
      return {
        contents: [{ uri, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }],
      };
    if (uri === 'test://static-binary')
      return { contents: [{ uri, mimeType: 'image/png', blob: CONFORMANCE_PNG_BASE64 }] };
    if (uri === 'test://watched-resource')
      return { contents: [{ uri, mimeType: 'text/plain', text: 'Watched.' }] };
    const match = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
    if (match) {
      const id = decodeURIComponent(match[1]!);
      return {
        contents: [
          {
            uri,
            mimeType: 'application/json',
            text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
          },
        ],
      };
    }
    throw new McpError(-32002, `Resource not found: ${uri}`);
  });
  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    subscribed.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    subscribed.delete(request.params.uri);
    return {};
  });

  server.setRequestHandler(ListPromptsRequestSchema, () => ({
    prompts: dynamicPrompt ? [...PROMPTS, DYNAMIC_PROMPT] : PROMPTS,
  }));
  server.setRequestHandler(GetPromptRequestSchema, (request): GetPromptResult => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case 'test_simple_prompt':
        return {
          messages: [
            { role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } },
          ],
        };
      case 'test_prompt_with_arguments':
        return {
          messages: [
            {
              role: 'user',
              content: {
                type: 'text',
                text: `Prompt with arguments: arg1='${args.arg1 ?? ''}', arg2='${args.arg2 ?? ''}'`,
              },
            },
          ],
        };
      case 'test_prompt_with_embedded_resource':
        return {
          messages: [
            {
              role: 'user',
              content: {
                type: 'resource',
                resource: {
                  uri: args.resourceUri ?? 'test://embedded',
                  mimeType: 'text/plain',
                  text: 'Embedded resource content for testing.',
                },
              },
            },
            { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } },
          ],
        };
      case 'test_prompt_with_image':
        return {
          messages: [
            { role: 'user', content: { type: 'image', data: CONFORMANCE_PNG_BASE64, mimeType: 'image/png' } },
            { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } },
          ],
        };
      case DYNAMIC_PROMPT.name:
        if (dynamicPrompt)
          return { messages: [{ role: 'user', content: { type: 'text', text: 'The dynamic prompt.' } }] };
        throw new McpError(ErrorCode.InvalidParams, `Unknown prompt ${request.params.name}`);
      default:
        throw new McpError(ErrorCode.InvalidParams, `Unknown prompt ${request.params.name}`);
    }
  });

  server.setRequestHandler(CompleteRequestSchema, (request) => {
    const ref = request.params.ref;
    if (ref.type === 'ref/prompt' && !PROMPTS.some((prompt) => prompt.name === ref.name))
      throw new McpError(ErrorCode.InvalidParams, `Unknown prompt ${ref.name}`);
    const prefix = request.params.argument.value.toLowerCase();
    const values = COMPLETIONS.filter((value) => value.startsWith(prefix));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  return server;
}

function elicitationSchema(tool: string): Record<string, unknown> {
  if (tool === 'test_elicitation_sep1034_defaults')
    return {
      type: 'object',
      properties: {
        name: { type: 'string', default: 'John Doe' },
        age: { type: 'integer', default: 30 },
        score: { type: 'number', default: 95.5 },
        status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
        verified: { type: 'boolean', default: true },
      },
    };
  if (tool === 'test_elicitation_sep1330_enums')
    return {
      type: 'object',
      properties: {
        untitledSingle: { type: 'string', enum: ['option1', 'option2', 'option3'] },
        titledSingle: {
          type: 'string',
          oneOf: [
            { const: 'value1', title: 'First Option' },
            { const: 'value2', title: 'Second Option' },
            { const: 'value3', title: 'Third Option' },
          ],
        },
        legacyEnum: {
          type: 'string',
          enum: ['opt1', 'opt2', 'opt3'],
          enumNames: ['Option One', 'Option Two', 'Option Three'],
        },
        untitledMulti: { type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } },
        titledMulti: {
          type: 'array',
          items: {
            anyOf: [
              { const: 'value1', title: 'First Choice' },
              { const: 'value2', title: 'Second Choice' },
              { const: 'value3', title: 'Third Choice' },
            ],
          },
        },
      },
    };
  return {
    type: 'object',
    properties: {
      username: { type: 'string', description: "User's response" },
      email: { type: 'string', description: "User's email address" },
    },
    required: ['username', 'email'],
  };
}
