/**
 * The XGrammar structural tag that constrains tool calls: 'auto' lets the model write freely until it opens a call
 * (a trigger), then holds the call to its syntax and the function's JSON schema; 'required' and a named function
 * make the answer consist of calls from its first token. `parallel_tool_calls: false` stops after the first call.
 */

import type { GrammarSpec } from '../structured/grammar-spec.js';
import { callTag, type ToolCallFormat } from './tool-call-format.js';
import type { ToolSpec } from './tool-spec.js';

/** The constraint for `spec` in `format`, or null when the syntax cannot be constrained (parsed only). */
export function toolGrammar(format: ToolCallFormat, spec: ToolSpec): GrammarSpec | null {
  const chosen =
    typeof spec.choice === 'object'
      ? spec.tools.filter((t) => t.name === (spec.choice as { name: string }).name)
      : spec.tools;
  const items = chosen.map((t) => callTag(format, t.name, t.parameters));
  if (items.some((x) => x === null)) return null;
  const tags = items.map((x) => x!.tag);
  const triggers = [...new Set(items.map((x) => x!.trigger))];
  const body =
    spec.choice === 'auto'
      ? { type: 'triggered_tags', triggers, tags, stop_after_first: !spec.parallel }
      : { type: 'tags_with_separator', tags, separator: '\n', at_least_one: true, stop_after_first: !spec.parallel };
  return { kind: 'structural-tag', tag: JSON.stringify({ type: 'structural_tag', format: body }) };
}
