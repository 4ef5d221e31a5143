/**
 * @module
 * An upstream MCP server on the 2026-07-28 revision (SDK v2 `@modelcontextprotocol/server`, an
 * optional peer: this module is not re-exported from `codecall/testing`'s index) offering what the
 * 2026 scenarios of `@modelcontextprotocol/conformance` 0.2.0-alpha call and the 2025 fixture
 * (`conformance-server.ts`) has not, written from the scenarios' descriptions ("Required server
 * fixtures"): the multi round-trip tools `test_input_required_result_*` (SEP-2322), the stateless
 * diagnostic `test_missing_capability` (SEP-2575) and a tool with `x-mcp-header` parameters
 * (SEP-2243), and the prompt `test_input_required_result_prompt`, which answers `prompts/get` with
 * `input_required` (SEP-2322 on a request other than `tools/call`). No tool or prompt name is one of
 * the 2025 fixture's, so both run behind one `codecall serve` with `serve.originalNames` and keep
 * their names. A resource that asks for input is served on request (`inputRequiredResource`): the
 * conformance run leaves it off, since with two servers offering resources the gateway names URIs
 * `<server>+<uri>` and the suite reads the 2025 fixture's by their own URIs.
 */
import { randomBytes } from 'node:crypto';
import {
  CLIENT_CAPABILITIES_META_KEY,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  createRequestStateCodec,
  inputRequired,
  inputResponse,
  type CallToolResult,
  type InputRequest,
  type InputRequiredResult,
  type ServerContext,
  type Tool,
} from '@modelcontextprotocol/server';
import { serveConformanceTaskTools, type ConformanceTaskState } from './conformance-2026-task-tools.js';

const TASKS_EXTENSION_ID = 'io.modelcontextprotocol/tasks';

const NO_ARGS = { type: 'object' as const, properties: {} };

/** The tools, as `tools/list` sends them. */
export const CONFORMANCE_2026_TOOLS: Tool[] = [
  ['test_input_required_result_elicitation', 'Asks for a name (elicitation) and greets it.'],
  ['test_input_required_result_sampling', 'Asks the client model a question (sampling).'],
  ['test_input_required_result_list_roots', "Lists the client's roots."],
  ['test_input_required_result_request_state', 'Asks for a confirmation and checks its own requestState.'],
  ['test_input_required_result_multiple_inputs', 'Asks for elicitation, sampling and roots at once.'],
  ['test_input_required_result_multi_round', 'Asks twice, with a requestState that changes.'],
  ['test_input_required_result_tampered_state', 'Asks with an integrity-protected requestState.'],
  ['test_input_required_result_capabilities', 'Asks only what the client declared it can answer.'],
  ['test_missing_capability', 'Needs the sampling capability; -32021 without it.'],
].map(([name, description]) => ({ name: name!, description: description!, inputSchema: NO_ARGS }));
CONFORMANCE_2026_TOOLS.push({
  name: 'test_custom_header_echo',
  description: 'Echoes its region, which clients also send as the Mcp-Param-Region header.',
  inputSchema: {
    type: 'object',
    properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
    required: ['region'],
  },
});

/** What this fixture's `requestState` carries (signed by its own key). */
interface FixtureState {
  tool: string;
  round: number;
}

const NAME_REQUEST = (message = 'What is your name?'): InputRequest =>
  inputRequired.elicit({
    message,
    requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
  });

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

function capabilitiesOf(ctx: ServerContext): Record<string, unknown> {
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  const declared = envelope?.[CLIENT_CAPABILITIES_META_KEY];
  return typeof declared === 'object' && declared !== null ? (declared as Record<string, unknown>) : {};
}

/** Options of {@link createConformanceServer2026}. */
export interface ConformanceServer2026Options {
  /**
   * Serve the Tasks extension's fixture tools (`conformance-2026-task-tools.ts`: `greet`,
   * `slow_compute`, `failing_job`…) beside these, over this task table (one per process, shared by
   * every server built on it). @defaultValue none: no task tools, no extension declared
   */
  tasks?: ConformanceTaskState | undefined;
  /**
   * Also serve the resource {@link INPUT_REQUIRED_RESOURCE_URI}, whose `resources/read` asks for a
   * confirmation (`input_required`) before it answers. @defaultValue false
   */
  inputRequiredResource?: boolean | undefined;
}

/** The prompt whose `prompts/get` answers `input_required` (the suite's `input-required-result-non-tool-request`). */
export const INPUT_REQUIRED_PROMPT = 'test_input_required_result_prompt';

/** The resource {@link ConformanceServer2026Options.inputRequiredResource} serves. */
export const INPUT_REQUIRED_RESOURCE_URI = 'test://input-required-resource';

/**
 * One 2026-07-28 server (build one per connection or request). Its `requestState` is HMAC-signed
 * with a key made once per process, so a retry must reach this process (codecall reaches it over
 * stdio).
 *
 * @example
 * ```ts
 * import { serveStdio } from '@modelcontextprotocol/server/stdio';
 * serveStdio(() => createConformanceServer2026(), { legacy: 'reject' });
 * ```
 */
export function createConformanceServer2026(options: ConformanceServer2026Options = {}): Server {
  const codec = createRequestStateCodec<FixtureState>({
    key: processKey,
    ttlSeconds: 600,
    bind: (ctx) => ctx.mcpReq.method,
  });
  const server = new Server(
    { name: 'conformance-fixture-2026', version: '1.0.0' },
    {
      capabilities: {
        tools: {},
        prompts: {},
        ...(options.inputRequiredResource === true ? { resources: {} } : {}),
        ...(options.tasks !== undefined ? { extensions: { [TASKS_EXTENSION_ID]: {} } } : {}),
      },
      requestState: { verify: codec.verify },
    },
  );
  const call = async (
    request: { params: { name: string; arguments?: Record<string, unknown> | undefined } },
    ctx: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult> => {
    const { name } = request.params;
    const responses = ctx.mcpReq.inputResponses;
    const state = ctx.mcpReq.requestState<FixtureState>();
    const stateOf = (round: number): Promise<string> => codec.mint({ tool: name, round }, ctx);
    switch (name) {
      case 'test_input_required_result_elicitation': {
        const answer = inputResponse(responses, 'user_name');
        if (
          answer.kind === 'elicit' &&
          answer.action === 'accept' &&
          typeof answer.content?.name === 'string'
        )
          return text(`Hello, ${answer.content.name}!`);
        // A missing or wrong answer is asked again (SEP-2322: re-request, not an error).
        return inputRequired({ inputRequests: { user_name: NAME_REQUEST() } });
      }
      case 'test_input_required_result_sampling': {
        const answer = inputResponse(responses, 'capital_question');
        if (answer.kind === 'sampling') {
          const content = answer.result.content as { type?: string; text?: string };
          return text(
            `The model answered: ${content.type === 'text' ? content.text : JSON.stringify(content)}`,
          );
        }
        return inputRequired({
          inputRequests: {
            capital_question: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
              maxTokens: 100,
            }),
          },
        });
      }
      case 'test_input_required_result_list_roots': {
        const answer = inputResponse(responses, 'client_roots');
        if (answer.kind === 'roots')
          return text(
            `The client has ${answer.roots.length} roots: ${answer.roots.map((r) => r.uri).join(', ')}`,
          );
        return inputRequired({ inputRequests: { client_roots: inputRequired.listRoots() } });
      }
      case 'test_input_required_result_request_state':
      case 'test_input_required_result_tampered_state': {
        const answer = inputResponse(responses, 'confirm');
        if (state?.tool === name && answer.kind === 'elicit')
          return text(`state-ok: the requestState came back intact (confirmed: ${answer.action}).`);
        return inputRequired({
          inputRequests: {
            confirm: inputRequired.elicit({
              message: 'Please confirm',
              requestedSchema: {
                type: 'object',
                properties: { ok: { type: 'boolean' } },
                required: ['ok'],
              },
            }),
          },
          requestState: await stateOf(1),
        });
      }
      case 'test_input_required_result_multiple_inputs': {
        const keys = ['user_name', 'greeting', 'client_roots'];
        if (state?.tool === name && keys.every((key) => inputResponse(responses, key).kind !== 'missing'))
          return text('Received all three inputs: user_name, greeting, client_roots.');
        return inputRequired({
          inputRequests: {
            user_name: NAME_REQUEST(),
            greeting: inputRequired.createMessage({
              messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
              maxTokens: 50,
            }),
            client_roots: inputRequired.listRoots(),
          },
          requestState: await stateOf(1),
        });
      }
      case 'test_input_required_result_multi_round': {
        if (state?.tool === name && state.round === 2 && inputResponse(responses, 'step2').kind === 'elicit')
          return text('Both steps answered: the multi-round request is complete.');
        if (state?.tool === name && state.round === 1 && inputResponse(responses, 'step1').kind === 'elicit')
          return inputRequired({
            inputRequests: {
              step2: inputRequired.elicit({
                message: 'Step 2: What is your favorite color?',
                requestedSchema: {
                  type: 'object',
                  properties: { color: { type: 'string' } },
                  required: ['color'],
                },
              }),
            },
            requestState: await stateOf(2),
          });
        return inputRequired({
          inputRequests: { step1: NAME_REQUEST('Step 1: What is your name?') },
          requestState: await stateOf(1),
        });
      }
      case 'test_input_required_result_capabilities': {
        const declared = capabilitiesOf(ctx);
        const asks: Record<string, InputRequest> = {};
        if (declared.sampling !== undefined)
          asks.sampled = inputRequired.createMessage({
            messages: [{ role: 'user', content: { type: 'text', text: 'Say hello.' } }],
            maxTokens: 20,
          });
        if (declared.elicitation !== undefined) asks.elicited = NAME_REQUEST();
        if (declared.roots !== undefined) asks.roots = inputRequired.listRoots();
        if (Object.keys(responses ?? {}).length > 0 || Object.keys(asks).length === 0)
          return text(
            `Asked only for what the client declared: ${Object.keys(declared).join(', ') || 'nothing'}.`,
          );
        return inputRequired({ inputRequests: asks });
      }
      case 'test_missing_capability':
        if (capabilitiesOf(ctx).sampling === undefined)
          throw new MissingRequiredClientCapabilityError(
            { requiredCapabilities: { sampling: {} } },
            'test_missing_capability needs the sampling capability, which the client did not declare.',
          );
        return text('The client declared sampling.');
      case 'test_custom_header_echo':
        return text(
          `region: ${String((request.params.arguments as { region?: unknown } | undefined)?.region)}`,
        );
      default:
        return { content: [{ type: 'text', text: `Unknown tool ${name}` }], isError: true };
    }
  };
  server.setRequestHandler('prompts/list', () => ({
    prompts: [
      {
        name: INPUT_REQUIRED_PROMPT,
        description: 'Asks for context (elicitation) before it is built.',
      },
    ],
  }));
  server.setRequestHandler('prompts/get', async (request, ctx) => {
    if (request.params.name !== INPUT_REQUIRED_PROMPT)
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown prompt ${request.params.name}`);
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'context');
    const state = ctx.mcpReq.requestState<FixtureState>();
    if (state?.tool === INPUT_REQUIRED_PROMPT && answer.kind === 'elicit' && answer.action === 'accept')
      return {
        messages: [
          {
            role: 'user' as const,
            content: { type: 'text' as const, text: `Context: ${JSON.stringify(answer.content ?? {})}` },
          },
        ],
      };
    return inputRequired({
      inputRequests: {
        context: inputRequired.elicit({
          message: 'What context should the prompt use?',
          requestedSchema: {
            type: 'object',
            properties: { context: { type: 'string' } },
            required: ['context'],
          },
        }),
      },
      requestState: await codec.mint({ tool: INPUT_REQUIRED_PROMPT, round: 1 }, ctx),
    });
  });
  if (options.inputRequiredResource === true) {
    server.setRequestHandler('resources/list', () => ({
      resources: [{ uri: INPUT_REQUIRED_RESOURCE_URI, name: 'input-required-resource' }],
    }));
    server.setRequestHandler('resources/read', async (request, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
      const state = ctx.mcpReq.requestState<FixtureState>();
      if (state?.tool === INPUT_REQUIRED_RESOURCE_URI && answer.kind === 'elicit')
        return {
          contents: [{ uri: request.params.uri, text: `read after confirmation (${answer.action})` }],
        };
      return inputRequired({
        inputRequests: {
          confirm: inputRequired.elicit({
            message: 'Read the resource?',
            requestedSchema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] },
          }),
        },
        requestState: await codec.mint({ tool: INPUT_REQUIRED_RESOURCE_URI, round: 1 }, ctx),
      });
    });
  }
  if (options.tasks !== undefined)
    serveConformanceTaskTools(server, options.tasks, {
      tools: CONFORMANCE_2026_TOOLS,
      call: (name, args, ctx) => call({ params: { name, arguments: args } }, ctx),
    });
  else {
    server.setRequestHandler('tools/list', () => ({ tools: CONFORMANCE_2026_TOOLS }));
    server.setRequestHandler('tools/call', call);
  }
  return server;
}

const processKey = randomBytes(32);
