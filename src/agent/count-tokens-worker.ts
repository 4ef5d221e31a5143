/**
 * @module
 * The worker thread behind `countTokensOffThread`: counts the texts of each message with
 * `countTokens` (o200k_base) and answers with their counts, so BPE never runs on the host's
 * event loop. Loaded from `dist/agent/count-tokens-worker.js`.
 */
import { parentPort } from 'node:worker_threads';
import { countTokens, type CountTokensMessage, type CountTokensReply } from './count-tokens.js';

const port = parentPort;
port?.on('message', (message: CountTokensMessage) => {
  const reply: CountTokensReply = { id: message.id, counts: message.texts.map(countTokens) };
  port.postMessage(reply);
});
