/**
 * @module
 * The environment a stdio MCP server is started with: the MCP SDK's safe default (a few
 * variables inherited from codecall's environment) plus the server's `env`. And what a start
 * error says about it: the names (never the values) that were passed, and the variables that
 * are set here but were not passed and commonly matter (a custom CA, a proxy, a registry), since
 * a child started through `npx -y` behind a custom CA hangs rather than failing. Internal to `tools/`.
 */
import { DEFAULT_INHERITED_ENV_VARS, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';

/**
 * Variables that a server started through `npx`, `uvx` or a similar launcher commonly needs to
 * reach a registry or an API behind a custom CA or a proxy. A start error names those that are
 * set in codecall's environment but were not passed to the child.
 */
export const CHILD_ENVIRONMENT_HINT_VARIABLES: readonly string[] = [
  'NODE_EXTRA_CA_CERTS',
  'NODE_OPTIONS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'REQUESTS_CA_BUNDLE',
  'HTTPS_PROXY',
  'https_proxy',
  'HTTP_PROXY',
  'http_proxy',
  'NO_PROXY',
  'no_proxy',
  'ALL_PROXY',
  'all_proxy',
  'NPM_CONFIG_REGISTRY',
  'npm_config_registry',
  'NPM_CONFIG_CAFILE',
  'npm_config_cafile',
  'UV_INDEX_URL',
  'PIP_INDEX_URL',
];

/** The names of a child's environment, by where each came from. */
export interface ChildEnvironmentNames {
  /** Inherited from codecall's environment by default (the MCP SDK's list, when set). */
  inherited: string[];
  /** From the server's `env` in the configuration. */
  configured: string[];
  /** Set in codecall's environment, not passed, and in {@link CHILD_ENVIRONMENT_HINT_VARIABLES}. */
  notPassed: string[];
}

/** The environment of a stdio server: the SDK's safe default, then the server's `env`. */
export function childEnvironment(env: Record<string, string>): Record<string, string> {
  return { ...getDefaultEnvironment(), ...env };
}

/** The names (never the values) of what {@link childEnvironment} passes and leaves out. */
export function childEnvironmentNames(
  env: Record<string, string>,
  parent: NodeJS.ProcessEnv = process.env,
): ChildEnvironmentNames {
  const configured = Object.keys(env).sort();
  const inherited = Object.keys(getDefaultEnvironment())
    .filter((name) => !Object.hasOwn(env, name))
    .sort();
  const passed = new Set([...configured, ...inherited]);
  const notPassed = CHILD_ENVIRONMENT_HINT_VARIABLES.filter(
    (name) => parent[name] !== undefined && parent[name] !== '' && !passed.has(name),
  );
  return { inherited, configured, notPassed };
}

/**
 * Lines for a start error: what the child was given (names only), which variables a stdio
 * server inherits by default, which relevant ones were left out, and how to pass more.
 */
export function describeChildEnvironment(server: string, names: ChildEnvironmentNames): string {
  const list = (items: readonly string[]): string => (items.length > 0 ? items.join(', ') : 'none');
  const lines = [
    `Environment passed to it (names only): inherited ${list(names.inherited)}; from "env": ${list(names.configured)}.`,
    `A stdio server inherits only ${DEFAULT_INHERITED_ENV_VARS.join(', ')} from codecall's environment, plus its "env".`,
  ];
  const example = names.notPassed[0] ?? 'NODE_EXTRA_CA_CERTS';
  lines.push(
    (names.notPassed.length > 0
      ? `Set here but not passed: ${names.notPassed.join(', ')}. `
      : 'A server behind a custom CA or a proxy (often one started through npx) needs NODE_EXTRA_CA_CERTS or HTTPS_PROXY. ') +
      `Pass a variable with "env": { "${example}": "\${${example}}" } in mcpServers.${server}.`,
  );
  return lines.join('\n');
}
