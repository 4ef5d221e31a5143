/**
 * What a stdio server's start error says about its environment: names of what was passed (the
 * SDK's default inherited set and the server's `env`), the relevant variables left out, and the
 * hint on how to pass one. Values never appear.
 */
import { DEFAULT_INHERITED_ENV_VARS, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import {
  childEnvironment,
  childEnvironmentNames,
  describeChildEnvironment,
} from '../../../src/tools/child-environment.js';

describe('child environment', () => {
  it('passes the SDK default plus env; env wins over an inherited variable of the same name', () => {
    const env = childEnvironment({ PATH: '/opt/bin', API_TOKEN: 'sk-1' });
    expect(env).toEqual({ ...getDefaultEnvironment(), PATH: '/opt/bin', API_TOKEN: 'sk-1' });
    const names = childEnvironmentNames({ PATH: '/opt/bin', API_TOKEN: 'sk-1' });
    expect(names.configured).toEqual(['API_TOKEN', 'PATH']);
    expect(names.inherited).not.toContain('PATH');
    expect([...names.inherited, ...names.configured].sort()).toEqual(Object.keys(env).sort());
  });

  it('names the relevant variables set here but not passed, and not those passed or empty', () => {
    const parent = {
      NODE_EXTRA_CA_CERTS: '/etc/ca.pem',
      HTTPS_PROXY: 'http://p:3128',
      NO_PROXY: '',
      UNRELATED: 'x',
    };
    expect(childEnvironmentNames({}, parent).notPassed).toEqual(['NODE_EXTRA_CA_CERTS', 'HTTPS_PROXY']);
    expect(childEnvironmentNames({ NODE_EXTRA_CA_CERTS: '/etc/ca.pem' }, parent).notPassed).toEqual([
      'HTTPS_PROXY',
    ]);
  });

  it('describes names only, with the first missing variable as the example', () => {
    const parent = { HTTPS_PROXY: 'http://user:hunter2@p:3128' };
    const text = describeChildEnvironment('gh', childEnvironmentNames({ GITHUB_TOKEN: 'ghp_x' }, parent));
    expect(text).toContain('; from "env": GITHUB_TOKEN.');
    expect(text).toContain(`inherits only ${DEFAULT_INHERITED_ENV_VARS.join(', ')} from`);
    expect(text).toContain(
      'Set here but not passed: HTTPS_PROXY. Pass a variable with "env": { "HTTPS_PROXY": "${HTTPS_PROXY}" } in mcpServers.gh.',
    );
    expect(text).not.toContain('hunter2');
    expect(text).not.toContain('ghp_x');
  });

  it('without a relevant variable set, says which ones a server behind a CA or proxy needs', () => {
    const text = describeChildEnvironment('gh', childEnvironmentNames({}, {}));
    expect(text).toContain('from "env": none.');
    expect(text).toContain(
      'needs NODE_EXTRA_CA_CERTS or HTTPS_PROXY. Pass a variable with "env": { "NODE_EXTRA_CA_CERTS": "${NODE_EXTRA_CA_CERTS}" } in mcpServers.gh.',
    );
  });
});
