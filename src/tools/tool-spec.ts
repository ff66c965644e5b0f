/**
 * `tools`, `tool_choice` and `parallel_tool_calls` of a chat request, validated (OpenAI shapes). An unknown tool
 * named by `tool_choice`, a malformed definition or a duplicate name is `LlmError('invalid-request')` naming the field.
 */

import { invalidField } from '../engine/sampling-options.js';

/** One function the model may call. */
export interface ToolFunction {
  readonly name: string;
  readonly description?: string;
  /** JSON schema of the arguments object (default: any object). */
  readonly parameters: Readonly<Record<string, unknown>>;
}

/** What the request allows: 'auto' (may call), 'required' (must call), a named function (must call it). */
type ToolChoice = 'auto' | 'required' | { readonly name: string };

/** Validated tool settings; null when no tools are in play (absent, empty or `tool_choice: 'none'`). */
export interface ToolSpec {
  readonly tools: readonly ToolFunction[];
  /** The definitions as given (rendered by the template). */
  readonly raw: readonly unknown[];
  readonly choice: ToolChoice;
  readonly parallel: boolean;
}

/** OpenAI `tools[i]`. */
export interface ChatTool {
  readonly type: 'function';
  readonly function: {
    readonly name: string;
    readonly description?: string;
    readonly parameters?: Readonly<Record<string, unknown>>;
    readonly strict?: boolean | null;
  };
}

/** OpenAI `tool_choice`. */
export type ChatToolChoice =
  | 'none'
  | 'auto'
  | 'required'
  | { readonly type: 'function'; readonly function: { readonly name: string } };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Validates the tool fields of a request. */
export function toolSpecOf(tools: unknown, toolChoice: unknown, parallel: unknown): ToolSpec | null {
  if (parallel !== undefined && parallel !== null && typeof parallel !== 'boolean')
    invalidField('parallel_tool_calls', parallel, 'a boolean');
  if (
    toolChoice !== undefined &&
    toolChoice !== null &&
    toolChoice !== 'none' &&
    toolChoice !== 'auto' &&
    toolChoice !== 'required'
  ) {
    const ok =
      isObject(toolChoice) &&
      toolChoice.type === 'function' &&
      isObject(toolChoice.function) &&
      typeof toolChoice.function.name === 'string';
    if (!ok)
      invalidField('tool_choice', toolChoice, "'none', 'auto', 'required' or { type: 'function', function: { name } }");
  }
  if (tools === undefined || tools === null) {
    if (toolChoice === 'required' || isObject(toolChoice))
      invalidField('tool_choice', toolChoice, "'none' or 'auto' when no tools are given");
    return null;
  }
  if (!Array.isArray(tools))
    invalidField('tools', tools, "an array of { type: 'function', function: { name, description, parameters } }");
  const seen = new Set<string>();
  const fns: ToolFunction[] = tools.map((t: unknown, i) => {
    const f = isObject(t) ? t.function : undefined;
    if (
      !isObject(t) ||
      t.type !== 'function' ||
      !isObject(f) ||
      typeof f.name !== 'string' ||
      !/^[A-Za-z0-9_.-]{1,64}$/.test(f.name)
    ) {
      invalidField(
        `tools[${i}]`,
        t,
        "{ type: 'function', function: { name (1–64 letters, digits, _ . -), description?, parameters? } }",
      );
    }
    if (seen.has(f.name)) invalidField(`tools[${i}].function.name`, f.name, 'unique among the tools');
    seen.add(f.name);
    if (f.description !== undefined && typeof f.description !== 'string')
      invalidField(`tools[${i}].function.description`, f.description, 'a string');
    const params = f.parameters ?? { type: 'object', properties: {} };
    if (!isObject(params)) invalidField(`tools[${i}].function.parameters`, params, 'a JSON schema object');
    return {
      name: f.name,
      ...(typeof f.description === 'string' ? { description: f.description } : {}),
      parameters: params,
    };
  });
  if (toolChoice === 'none' || fns.length === 0) {
    if (isObject(toolChoice) || toolChoice === 'required')
      invalidField('tool_choice', toolChoice, 'naming one of the tools given');
    return null;
  }
  let choice: ToolChoice = 'auto';
  if (toolChoice === 'required') choice = 'required';
  else if (isObject(toolChoice)) {
    const name = (toolChoice.function as { name: string }).name;
    if (!seen.has(name))
      invalidField('tool_choice', toolChoice, `naming one of the tools given (${[...seen].join(', ')})`);
    choice = { name };
  }
  return { tools: fns, raw: tools as unknown[], choice, parallel: parallel !== false };
}
