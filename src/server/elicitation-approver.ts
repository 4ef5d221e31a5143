/**
 * @module
 * Approvals for `codecall serve`: a call that needs approval (`requireApproval`) is put to the
 * MCP client as `elicitation/create` (a form with one boolean, "approve") when the client
 * declared the `elicitation` capability, on the stream of the `tools/call` that made it. A client
 * without the capability cannot be asked: the call is denied with a reason saying so.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  ElicitResultSchema,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { DEFAULT_APPROVAL_TIMEOUT_MS } from '../config/defaults.js';
import { approvalConfigKey, type ApprovalDecision, type Approver } from '../tools/index.js';
import { escapeInvisible, renderApprovalCall } from '../tools/approval-text.js';

/** Time the SDK request may take beyond the approval timeout (the approval's own timer decides). */
const ELICITATION_TIMEOUT_MARGIN_MS = 5_000;

/**
 * The approver of one `tools/call` of a session: asks the client through elicitation when it
 * can, otherwise denies with a reason.
 */
export function elicitationApprover(
  server: Server,
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>,
  approvalTimeoutMs: number = DEFAULT_APPROVAL_TIMEOUT_MS,
): Approver {
  return async (request): Promise<ApprovalDecision> => {
    const key = approvalConfigKey({
      server: request.server,
      tool: request.tool.slice(request.server.length + 1),
    });
    if (!server.getClientCapabilities()?.elicitation)
      return {
        approved: false,
        decidedBy: 'policy',
        reason: `the MCP client did not declare the elicitation capability, so codecall cannot ask for approval; use a client that supports elicitation, or set ${key} to false in codecall's configuration`,
      };
    const from =
      request.caller === 'code_execution'
        ? `a script (execute_code${request.callIndex !== undefined ? `, call #${request.callIndex + 1}` : ''}${request.line !== undefined ? `, line ${request.line}` : ''})`
        : 'a direct call';
    const result = await extra.sendRequest(
      {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: `Approve ${renderApprovalCall(request)} from ${from}? It needs approval because ${escapeInvisible(request.reason)}.`,
          requestedSchema: {
            type: 'object',
            properties: {
              approve: {
                type: 'boolean',
                title: `Run ${escapeInvisible(request.tool)}`,
                description: 'true runs the call once; false denies it.',
              },
            },
            required: ['approve'],
          },
        },
      },
      ElicitResultSchema,
      { signal: request.signal, timeout: approvalTimeoutMs + ELICITATION_TIMEOUT_MARGIN_MS },
    );
    if (result.action === 'accept' && result.content?.approve === true)
      return { approved: true, decidedBy: 'elicitation' };
    return {
      approved: false,
      decidedBy: 'elicitation',
      reason: result.action === 'accept' ? 'the client answered no' : `the client chose ${result.action}`,
    };
  };
}
