/**
 * @module
 * `codecall run`: name, summary and usage text, loaded without the command's implementation
 * (`codecall --help` and `codecall run --help` read only this).
 */
import type { CommandHelp } from '../command.js';

/** `codecall run --help`. */
export const runHelp: CommandHelp = {
  name: 'run',
  summary: 'Run a task with a model: tool search + code execution over your MCP servers',
  usage: `Usage: codecall run "<task>" [--model <provider:model>] [--base-url <url>] [--max-steps <n>]
                    [--max-output-tokens <n>] [--mode code|direct] [--config <path>] [--json] [--approve <tool | all>]

Runs a task with a language model over the configured MCP servers. In code mode (the default)
the model finds tools with search_tools and calls them from code with execute_code; only what
its scripts print enters its context. Direct mode offers every tool up front, the traditional
way, for comparison.

Options:
  --model <spec>      anthropic:<model> (ANTHROPIC_API_KEY), openai:<model> (OPENAI_API_KEY, or
                      any compatible server with --base-url), or demo: an offline scripted stand-in
                      that plays the expense example (not AI). Default: "agent.model" in the
                      configuration, else $CODECALL_MODEL.
  --base-url <url>    API root of the provider (a proxy, Ollama, vLLM…)
  --max-steps <n>     model requests before the run stops (default: agent.maxSteps, else 20)
  --max-output-tokens <n>
                      output tokens asked per model request (max_tokens); lower it for a local
                      server with a small context (default: agent.maxOutputTokens, else 8192)
  --mode code|direct  how the model uses tools (default: code)
  --config <path>     configuration file (default: ./codecall.json, then ./.mcp.json)
  --json              print the full run result as one JSON object on stdout
  --approve <tool>    approve calls of server.tool that need approval (requireApproval) without
                      asking; repeatable; "all" approves every call. Without it, a terminal is
                      asked (y/N on stderr); without a terminal such calls are denied

Upstream questions: when an MCP server asks for input during a call (an elicitation form),
a terminal is asked on stderr ([a]nswer, [d]ecline or [c]ancel, then one line per field);
without a terminal the call fails with a message saying so (the model sees the error).

Try it offline:
  codecall run "Which team members exceeded their Q3 travel budget?" --model demo --config examples/codecall.json

Exit status: 0 answered, 1 the run stopped without an answer (max steps, time, cancelled,
provider failure), 2 usage or configuration error, 130 interrupted by SIGINT (Ctrl-C), 143 by
SIGTERM (servers and sandboxes are closed first; a second signal exits at once).
`,
};
