/**
 * @module
 * codecall as a library: an orchestrator over the example expense server, driven by the offline
 * demo model (swap in 'anthropic:claude-sonnet-4-6' or 'openai:gpt-4.1' with a key), then
 * search and code execution without a model.
 *
 * Run from the repository root: `node --no-node-snapshot examples/library/quick-start.ts`
 */
import { createOrchestrator, isCodecallError } from 'codecall';

// try/finally rather than `await using`: Node 22 runs this file (types stripped) but does not
// parse `using` declarations (Node 24 and TypeScript-compiled code do).
const agent = await createOrchestrator({
  model: 'demo',
  load: { path: new URL('../codecall.json', import.meta.url).pathname },
  runtimeOptions: { history: false },
}).catch((error: unknown) => {
  if (isCodecallError(error)) console.error(`${error.code}: ${error.message}`);
  throw error;
});
try {
  const result = await agent.run('Which team members exceeded their Q3 travel budget?');
  console.log(result.answer);
  const { contextTokens, toolResultTokensKeptOut, toolResultBytesKeptOut } = result.savings;
  console.log(
    `context: ${contextTokens} tokens; kept out: ${toolResultTokensKeptOut} tokens of tool results (${toolResultBytesKeptOut} bytes)`,
  );

  const found = agent.searchTools('budget of a level by category');
  console.log(`top hit: ${found.hits[0]?.name}`);

  const executed = await agent.execute(
    'const { members } = await tools.expenses.get_team_members({}); console.log(members.length + " members");',
  );
  console.log(executed.status, executed.stdout.trim());
} catch (error) {
  if (isCodecallError(error)) console.error(`${error.code}: ${error.message}`);
  throw error;
} finally {
  await agent.close();
}
