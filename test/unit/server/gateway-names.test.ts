/**
 * @module
 * The gateway's prompt names: `<namespace>__<prompt>` maps back to its server, and where one
 * namespace is a prefix of another (`git` and `git__hub`), the longest matching namespace wins,
 * so a prompt of `git__hub` is never taken for a prompt of `git`.
 */
import { describe, expect, it } from 'vitest';

import { GatewayNames } from '../../../src/server/gateway-names.js';

describe('GatewayNames prompt names', () => {
  it('maps a prompt name back to the server with the longest matching namespace', () => {
    for (const servers of [
      ['git', 'git__hub'],
      ['git__hub', 'git'],
      ['a', 'a__b', 'a__b__c'],
    ]) {
      const names = new GatewayNames(servers);
      for (const server of servers) {
        const name = names.promptName(server, 'review');
        expect(names.parsePromptName(name), `${name} among ${servers.join(', ')}`).toEqual({
          server,
          name: 'review',
        });
      }
    }
  });

  it('keeps the rest of the name when only a shorter namespace matches', () => {
    const names = new GatewayNames(['git', 'git__hub']);
    expect(names.parsePromptName('git__lab__review')).toEqual({ server: 'git', name: 'lab__review' });
    expect(names.parsePromptName('gitlab__review')).toBeUndefined();
    expect(names.parsePromptName('git__')).toBeUndefined();
  });
});
