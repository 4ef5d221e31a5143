/**
 * @module
 * Vendor programmatic-tool-calling endpoints over any codecall model: Anthropic Messages
 * (`POST /v1/messages`). See docs/vendor-endpoints.md.
 */
export { createVendorRoutes, MESSAGES_PATH, messageEvents } from './vendor-routes.js';
export type { VendorRoutes, VendorRoutesOptions } from './vendor-routes.js';
export { createMessage } from './anthropic-messages.js';
export type { AnthropicMessage, VendorContext } from './anthropic-messages.js';
export { ContainerSigner } from './container-token.js';
export { VendorError } from './vendor-error.js';
