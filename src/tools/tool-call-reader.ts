/**
 * The tool-call readers as one lazily loaded chunk: only a request that passes `tools` loads it (through
 * `loadToolCallReader`), so the script-tag core does not carry the syntaxes' parsers.
 */

export { parseToolCalls } from './tool-call-parse.js';
export { partialToolCalls } from './tool-call-stream.js';
