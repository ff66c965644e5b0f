/**
 * Native tool-call syntaxes, detected from the chat template's text (as llama.cpp's common/chat.cpp picks a parser):
 * how a call is written (for XGrammar structural tags, so arguments always match the function's schema once a call
 * starts) and how calls are read back from the output.
 *
 * | format        | families                                  | a call                                                            |
 * |---------------|-------------------------------------------|-------------------------------------------------------------------|
 * | hermes        | Hermes, Qwen2.5, Qwen3, SmolLM3, generic  | `<tool_call>\n{"name": "f", "arguments": {…}}\n</tool_call>`      |
 * | qwen3-coder   | Qwen3-Coder, Qwen3.5                      | `<tool_call>\n<function=f>\n<parameter=p>\nv\n</parameter>\n</function>\n</tool_call>` |
 * | seed-oss      | ByteDance Seed-OSS                        | `<seed:tool_call>\n<function=f>\n<parameter=p>v</parameter>\n</function>\n</seed:tool_call>` (parsed, not constrained) |
 * | llama3        | Llama 3.1–3.3                             | `{"name": "f", "parameters": {…}}` (optionally after `<|python_tag|>`) |
 * | mistral       | Mistral Nemo / Small (v3–v7)              | `[TOOL_CALLS][{"name": "f", "arguments": {…}}]`                  |
 * | mistral-args  | Ministral 3, Magistral, Mistral Small 3.2 | `[TOOL_CALLS]f[ARGS]{…}`                                          |
 * | harmony       | gpt-oss                                   | `<|channel|>commentary to=functions.f <|constrain|>json<|message|>{…}<|call|>` |
 * | granite       | Granite 3.x                               | `<|tool_call|>[{"name": "f", "arguments": {…}}]`                  |
 * | phi4          | Phi-4-mini                                | `functools[{"name": "f", "arguments": {…}}]`                      |
 * | lfm2          | LFM2 / LFM2.5                             | `<|tool_call_start|>[f(p="v")]<|tool_call_end|>` (parsed, not constrained) |
 * | gemma4        | Gemma 4                                   | `<|tool_call>call:f{p:<|"|>v<|"|>}<tool_call|>` (parsed, not constrained) |
 */

/** A tool-call syntax. */
export type ToolCallFormat =
  | 'hermes'
  | 'qwen3-coder'
  | 'seed-oss'
  | 'llama3'
  | 'mistral'
  | 'mistral-args'
  | 'harmony'
  | 'granite'
  | 'phi4'
  | 'lfm2'
  | 'gemma4';

/** Detects the syntax from the template text (first match wins); templates without a known one get 'hermes'. */
export function detectToolCallFormat(template: string): ToolCallFormat {
  const has = (...s: string[]): boolean => s.every((x) => template.includes(x));
  if (has('<|channel|>')) return 'harmony';
  if (has('[TOOL_CALLS]')) return has('[ARGS]') ? 'mistral-args' : 'mistral';
  // LFM2 lists tools in special tokens; LFM2.5 as plain "List of tools: [" (both call in <|tool_call_start|>[…]).
  if (has('<|tool_list_start|>') || has('List of tools: [') || has('<|tool_call_start|>')) return 'lfm2';
  if (has('<|tool_call>')) return 'gemma4';
  if (has('<seed:tool_call>')) return 'seed-oss';
  // As llama.cpp: Qwen3-Coder tags need <tool_call> too, and not the variant without newlines between the tags.
  if (has('<tool_call>', '<function=', '<parameter=') && !has("'<tool_call><function=' ~ tool_call.name ~ '>'"))
    return 'qwen3-coder';
  if (has('<tool_call>')) return 'hermes';
  if (has('<|tool_call|>')) return 'granite';
  if (has('functools[') || has('<|tool|>', '<|/tool|>')) return 'phi4';
  if (has('<|python_tag|>') || has('ipython')) return 'llama3';
  return 'hermes';
}

/** The strings that open a call in `format` (the streamed answer is held back from the first one on). */
export function callTriggers(format: ToolCallFormat): readonly string[] {
  switch (format) {
    case 'hermes':
      return ['<tool_call>'];
    case 'qwen3-coder':
      return ['<tool_call>', '<function='];
    case 'seed-oss':
      return ['<seed:tool_call>'];
    case 'llama3':
      return ['<|python_tag|>', '{"name"'];
    case 'mistral':
    case 'mistral-args':
      return ['[TOOL_CALLS]'];
    case 'harmony':
      return [' to=functions.'];
    case 'granite':
      return ['<|tool_call|>'];
    case 'phi4':
      return ['functools['];
    case 'lfm2':
      return ['<|tool_call_start|>'];
    case 'gemma4':
      return ['<|tool_call>'];
  }
}

/** An XGrammar structural-tag `tag` item. */
export interface CallTag {
  readonly type: 'tag';
  readonly begin: string;
  readonly content:
    | { readonly type: 'json_schema'; readonly json_schema: unknown }
    | { readonly type: 'qwen_xml_parameter'; readonly json_schema: unknown };
  readonly end: string;
}

/**
 * The structural tag of one call to `name` in `format`, with its trigger (a prefix of `begin`), or null when the
 * syntax is not expressible as one (lfm2, gemma4, seed-oss: parsed only).
 */
export function callTag(
  format: ToolCallFormat,
  name: string,
  schema: unknown,
): { tag: CallTag; trigger: string } | null {
  const q = JSON.stringify(name);
  const json = { type: 'json_schema' as const, json_schema: schema };
  switch (format) {
    case 'hermes':
      return {
        tag: { type: 'tag', begin: `<tool_call>\n{"name": ${q}, "arguments": `, content: json, end: '}\n</tool_call>' },
        trigger: '<tool_call>',
      };
    case 'qwen3-coder':
      return {
        tag: {
          type: 'tag',
          begin: `<tool_call>\n<function=${name}>\n`,
          content: { type: 'qwen_xml_parameter', json_schema: schema },
          end: '\n</function>\n</tool_call>',
        },
        trigger: '<tool_call>',
      };
    case 'llama3':
      return {
        tag: { type: 'tag', begin: `{"name": ${q}, "parameters": `, content: json, end: '}' },
        trigger: '{"name": ',
      };
    case 'mistral':
      return {
        tag: { type: 'tag', begin: `[TOOL_CALLS][{"name": ${q}, "arguments": `, content: json, end: '}]' },
        trigger: '[TOOL_CALLS]',
      };
    case 'mistral-args':
      return {
        tag: { type: 'tag', begin: `[TOOL_CALLS]${name}[ARGS]`, content: json, end: '' },
        trigger: '[TOOL_CALLS]',
      };
    case 'harmony':
      return {
        tag: {
          type: 'tag',
          begin: `<|channel|>commentary to=functions.${name} <|constrain|>json<|message|>`,
          content: json,
          end: '',
        },
        trigger: '<|channel|>commentary to=',
      };
    case 'granite':
      return {
        tag: { type: 'tag', begin: `<|tool_call|>[{"name": ${q}, "arguments": `, content: json, end: '}]' },
        trigger: '<|tool_call|>',
      };
    case 'phi4':
      return {
        tag: { type: 'tag', begin: `functools[{"name": ${q}, "arguments": `, content: json, end: '}]' },
        trigger: 'functools[',
      };
    default:
      return null;
  }
}
