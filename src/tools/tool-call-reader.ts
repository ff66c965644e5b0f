/**
 * Tool calling as one lazily loaded chunk: only a request that passes `tools` loads it (through
 * `loadToolCallReader`), so the script-tag core carries neither the syntaxes' detection, prompts and grammars nor
 * their parsers.
 */

export { callTriggers, detectToolCallFormat } from './tool-call-format.js';
export { parseToolCalls } from './tool-call-parse.js';
export { partialToolCalls } from './tool-call-stream.js';
export { toolGrammar } from './tool-grammar.js';
export { withGenericToolPrompt } from './tool-prompt.js';
export { ToolStreamGate } from './tool-stream-gate.js';
