/**
 * The marker strings of every native tool-call syntax (tool-call-format.ts): special tokens the grammar engine and
 * the output parser must see as text. Kept apart from the syntaxes themselves, which load with the tool-call chunk
 * (tool-call-reader.ts) only for requests that pass `tools`.
 */

/** Marker strings of every syntax. */
export const TOOL_MARKERS: readonly string[] = [
  '<tool_call>',
  '</tool_call>',
  '<seed:tool_call>',
  '</seed:tool_call>',
  '<|python_tag|>',
  '[TOOL_CALLS]',
  '[ARGS]',
  '[CALL_ID]',
  '<|channel|>',
  '<|message|>',
  '<|constrain|>',
  '<|start|>',
  '<|end|>',
  '<|tool_call|>',
  '<|tool_call_start|>',
  '<|tool_call_end|>',
  '<|tool_call>',
  '<tool_call|>',
  '<|"|>',
];
