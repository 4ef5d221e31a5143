/**
 * Approvals in the agent loop, with the scripted model: `stream()` emits `approval-request`
 * events the consumer answers, `run()` without `onApproval` denies, and `onApproval` decides
 * direct calls and calls from code alike.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createOrchestrator, type AgentEvent, type Orchestrator } from '../../../src/agent/index.js';
import { parseConfig } from '../../../src/config/index.js';
import {
  createMisbehavingServer,
  inMemoryTransport,
  type MisbehavingServerProbe,
} from '../../../src/testing/servers/index.js';
import { ScriptedLanguageModel, text, toolCall } from '../../../src/testing/index.js';
import type { Approver } from '../../../src/tools/index.js';

const DESTROY =
  "try { console.log(await tools.misc.destroy({})); } catch (error) { console.log('caught', error.code); }";

const agents: Orchestrator[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

async function agentWith(
  model: ScriptedLanguageModel,
  onApproval?: Approver,
  mode: 'code' | 'direct' = 'code',
): Promise<{ agent: Orchestrator; probe: () => MisbehavingServerProbe }> {
  let probe: MisbehavingServerProbe | undefined;
  const agent = await createOrchestrator({
    model,
    mode,
    config: parseConfig(
      {
        mcpServers: {
          misc: { command: 'unused', tools: { destroy: { allowedCallers: ['direct', 'code_execution'] } } },
        },
        history: { enabled: false },
      },
      { file: '<agent-approvals.test>' },
    ),
    runtimeOptions: {
      history: false,
      tools: {
        transports: {
          misc: inMemoryTransport(() => {
            const made = createMisbehavingServer({ name: 'misc' });
            probe = made.probe;
            return made.server;
          }),
        },
      },
    },
    ...(onApproval ? { onApproval } : {}),
  });
  agents.push(agent);
  return { agent, probe: () => probe! };
}

describe('approvals in the agent loop', () => {
  it('stream(): the script pauses on approval-request; approve() runs the call once', async () => {
    const model = new ScriptedLanguageModel([toolCall('execute_code', { code: DESTROY }), text('Done.')]);
    const { agent, probe } = await agentWith(model);
    const seen: AgentEvent['type'][] = [];
    let stdout = '';
    for await (const event of agent.stream('Destroy everything.')) {
      seen.push(event.type);
      if (event.type === 'approval-request') {
        expect(event.request).toMatchObject({
          tool: 'misc.destroy',
          caller: 'code_execution',
          callIndex: 0,
          line: 1,
        });
        expect(probe().destroyed).toBe(0);
        event.approve();
      }
      if (event.type === 'execution-end') stdout = event.execution.result.stdout;
    }
    expect(stdout).toBe('destroyed\n');
    expect(probe().destroyed).toBe(1);
    expect(seen.indexOf('approval-request')).toBeGreaterThan(seen.indexOf('execution-start'));
    expect(seen.indexOf('approval-request')).toBeLessThan(seen.indexOf('execution-end'));
  });

  it('run() without onApproval denies: the script catches APPROVAL_DENIED', async () => {
    const model = new ScriptedLanguageModel([toolCall('execute_code', { code: DESTROY }), text('Done.')]);
    const { agent, probe } = await agentWith(model);
    const result = await agent.run('Destroy everything.');
    expect(result.steps[0]!.executions[0]!.result.stdout).toBe('caught APPROVAL_DENIED\n');
    expect(probe().destroyed).toBe(0);
  });

  it('onApproval decides direct calls of the model too', async () => {
    const asked: string[] = [];
    const model = new ScriptedLanguageModel([toolCall('misc__destroy', {}), text('Done.')]);
    const { agent, probe } = await agentWith(
      model,
      (request) => {
        asked.push(`${request.tool} ${request.caller}`);
        return false;
      },
      'direct',
    );
    const result = await agent.run('Destroy everything.');
    const call = result.steps[0]!.toolCalls[0]!;
    expect(asked).toEqual(['misc.destroy direct']);
    expect(call.isError).toBe(true);
    expect(call.content).toMatch(/^Tool misc\.destroy was not approved/);
    expect(probe().destroyed).toBe(0);
  });
});
