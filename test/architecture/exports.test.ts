/**
 * @module
 * The public surface is an API decision: this snapshot changes only on purpose.
 */
import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';
import * as aiSdk from '../../src/adapters/ai-sdk/index.js';
import * as openaiAgents from '../../src/adapters/openai-agents/index.js';
import * as testing from '../../src/testing/index.js';

describe('public exports', () => {
  it('names every runtime export of codecall', () => {
    expect(Object.keys(api).sort()).toMatchSnapshot();
  });
  it('names every runtime export of codecall/testing', () => {
    expect(Object.keys(testing).sort()).toMatchSnapshot();
  });
  it('names every runtime export of codecall/ai-sdk', () => {
    expect(Object.keys(aiSdk).sort()).toMatchSnapshot();
  });
  it('names every runtime export of codecall/openai-agents', () => {
    expect(Object.keys(openaiAgents).sort()).toMatchSnapshot();
  });
});
