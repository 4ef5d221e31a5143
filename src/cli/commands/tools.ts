/**
 * @module
 * `codecall tools [--config path] [--json] [--declarations]`: the catalog of every configured
 * MCP server — server, qualified name, sandbox name, who may call it, one-line description —
 * and the state of each server (failed ones with their stderr tail).
 */
import { renderDeclarations } from '../../compile/index.js';
import { loadConfig } from '../../config/index.js';
import { servedNames, type ServedNames } from '../../server/gateway-names.js';
import { CodecallRuntime } from '../../execute/index.js';
import type { CatalogTool, ServerStatus } from '../../tools/index.js';
import { parseCommandArgs, UsageError, type CliCommand, type CliIo } from '../command.js';
import { configNoticeWriter } from '../config-notices.js';
import { neutralizeControls } from '../terminal-text.js';
import { canPrompt, ensureConfigTrusted } from '../trust.js';
import { toolsHelp } from './tools.help.js';

/** Characters of a description shown in the plain listing. */
const DESCRIPTION_COLUMN_CHARS = 90;

interface ToolsArgs {
  config?: string;
  json: boolean;
  declarations: boolean;
}

/** Parses `--config <path>` / `--config=<path>` and boolean flags; rejects anything else. */
export function parseToolsArgs(argv: string[]): ToolsArgs {
  const { values } = parseCommandArgs({
    args: argv,
    options: { config: { type: 'string' }, json: { type: 'boolean' }, declarations: { type: 'boolean' } },
    allowPositionals: false,
  });
  const args: ToolsArgs = { json: values.json === true, declarations: values.declarations === true };
  if (values.config !== undefined) args.config = values.config;
  if (args.json && args.declarations) throw new UsageError('use either --json or --declarations, not both.');
  return args;
}

function oneLine(text: string, max: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

function callers(tool: CatalogTool): string {
  return tool.allowedCallers.map((c) => (c === 'code_execution' ? 'code' : c)).join('+') || 'none';
}

function renderPlain(tools: readonly CatalogTool[], servers: ServerStatus[], served: ServedNames): string {
  const out: string[] = [];
  for (const server of servers) {
    const list = tools.filter((t) => t.server === server.name);
    out.push(
      `${server.name} (${server.transport}, ${server.state}${server.state === 'connected' ? `, ${list.length} tools` : ''})`,
    );
    if (server.state !== 'connected' && server.error) {
      out.push(...server.error.split('\n').map((l) => `  ! ${l}`));
    }
    for (const warning of server.warnings) out.push(`  ! ${warning}`);
    const gateway = served.servers.get(server.name);
    const offered = [
      ...(gateway?.prompts ? [`prompts as ${gateway.prompts}`] : []),
      ...(gateway?.resources ? [`resources as ${gateway.resources}`] : []),
    ];
    if (offered.length > 0) out.push(`  codecall serve: ${offered.join(', ')}`);
    const nameWidth = Math.max(0, ...list.map((t) => t.name.length));
    const sandboxWidth = Math.max(0, ...list.map((t) => `tools.${t.namespace}.${t.member}`.length));
    const callerWidth = Math.max(0, ...list.map((t) => callers(t).length));
    for (const tool of list) {
      const direct = served.tools.get(tool.name);
      out.push(
        `  ${tool.name.padEnd(nameWidth)}  ${`tools.${tool.namespace}.${tool.member}`.padEnd(sandboxWidth)}  ` +
          `${callers(tool).padEnd(callerWidth)}  ${oneLine(tool.description || tool.title || '', DESCRIPTION_COLUMN_CHARS)}` +
          `${direct !== undefined ? ` [serve: ${direct}]` : ''}`,
      );
    }
    out.push('');
  }
  if (servers.length === 0) out.push('No MCP servers are configured (add some under "mcpServers").', '');
  return out.join('\n');
}

async function run(argv: string[], io: CliIo): Promise<number> {
  const args = parseToolsArgs(argv);
  await ensureConfigTrusted(io, { config: args.config, interactive: canPrompt(io) });
  const config = await loadConfig({
    ...(args.config !== undefined ? { path: args.config } : {}),
    cwd: io.cwd,
    env: io.env,
    onNotice: configNoticeWriter(io),
  });
  // The one root, with only the servers: no sandbox, no history, no search index.
  const runtime = await CodecallRuntime.open({ config, parts: { sandbox: 'lazy' }, history: false });
  const pool = runtime.tools;
  try {
    const tools = pool.catalog();
    const servers = pool.serverStatus();
    const served = servedNames(tools, pool.upstreams(), config.serve.originalNames);
    if (args.declarations) {
      // Names, descriptions and server errors come from MCP servers: no raw control sequences.
      io.stdout.write(
        neutralizeControls(
          renderDeclarations(tools.filter((t) => t.allowedCallers.includes('code_execution'))),
        ),
      );
    } else if (args.json) {
      const json = {
        servers: servers.map((status) => {
          const gateway = served.servers.get(status.name);
          return gateway && (gateway.prompts || gateway.resources) ? { ...status, serve: gateway } : status;
        }),
        tools: tools.map((t) => ({
          name: t.name,
          server: t.server,
          tool: t.tool,
          sandboxName: `tools.${t.namespace}.${t.member}`,
          allowedCallers: t.allowedCallers,
          allowedCallersSource: t.allowedCallersSource,
          requireApproval: t.requireApproval ?? false,
          requireApprovalSource: t.requireApprovalSource ?? 'default',
          deferLoading: t.deferLoading,
          ...(served.tools.has(t.name) ? { serveName: served.tools.get(t.name) } : {}),
          description: t.description,
        })),
      };
      io.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
    } else {
      io.stdout.write(neutralizeControls(renderPlain(tools, servers, served)));
    }
    return servers.some((s) => s.state !== 'connected') ? 1 : 0;
  } finally {
    await runtime.close();
  }
}

/** `codecall tools`. */
export const toolsCommand: CliCommand = {
  ...toolsHelp,
  run,
};
