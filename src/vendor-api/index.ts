/**
 * @module
 * Vendor programmatic-tool-calling endpoints over any codecall model: Anthropic Messages
 * (`POST /v1/messages`) and OpenAI Responses (`POST /v1/responses`). See docs/vendor-endpoints.md.
 */
export { createVendorRoutes, MESSAGES_PATH, messageEvents, RESPONSES_PATH } from './vendor-routes.js';
export { createResponse, responseEvents } from './openai-responses.js';
export type { OpenAIResponse } from './openai-responses.js';
export type { VendorRoutes, VendorRoutesOptions } from './vendor-routes.js';
export { createMessage } from './anthropic-messages.js';
export type { AnthropicMessage, VendorContext } from './anthropic-messages.js';
export { ContainerSigner } from './container-token.js';
export { VendorError } from './vendor-error.js';
