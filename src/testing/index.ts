/**
 * @module
 * Test doubles shipped as product (`codecall/testing`): a scripted language model and test MCP
 * servers for users' own tests.
 */
export {};
