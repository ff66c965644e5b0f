/**
 * Chat layer: message validation, template rendering (`renderChat`) and prompt assembly (`buildPrompt`,
 * `trimHistory`). Takes plain data (messages, GGUF metadata, a `Tokenizer`), never a file.
 */

export type { ChatMessage } from './messages.js';
export { CHATML_TEMPLATE, renderChat, selectTemplate } from './template.js';
export { buildPrompt, splitTurns, trimHistory } from './prompt.js';
export { sha256Hex } from '../io/sha256.js';
export { templateSupportsThinking } from './template.js';
export { compileTemplate } from './template-compile.js';
export { templateCaps } from './template-caps.js';
