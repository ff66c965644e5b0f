/**
 * The generic tool prompt for chat templates without tool support (their `tools` variable is never read): the
 * tools are described in a system message that asks for Hermes-style `<tool_call>` JSON, earlier calls become
 * assistant text in that syntax and tool results become user messages in `<tool_response>` tags. The output is then
 * constrained and parsed as the 'hermes' syntax.
 */

import type { ChatMessage } from '../api/types.js';
import type { ToolSpec } from './tool-spec.js';

/** `messages` rewritten for a template that cannot render tools. */
export function withGenericToolPrompt(messages: readonly ChatMessage[], spec: ToolSpec): ChatMessage[] {
  const list = spec.tools.map((t) => JSON.stringify({ type: 'function', function: t })).join('\n');
  const must =
    spec.choice === 'auto'
      ? 'You may call one or more of them'
      : typeof spec.choice === 'object'
        ? `You must call ${spec.choice.name}`
        : 'You must call at least one of them';
  const prompt =
    `You have access to these tools:\n<tools>\n${list}\n</tools>\n${must}. To call a tool, write\n` +
    '<tool_call>\n{"name": <function name>, "arguments": <arguments as a JSON object>}\n</tool_call>\nfor each call; tool results come back in <tool_response> tags.';
  const out: ChatMessage[] = [];
  const textOf = (c: ChatMessage['content']): string =>
    typeof c === 'string' ? c : c === null ? '' : c.map((p) => p.text).join('');
  for (const m of messages) {
    if (m.role === 'assistant' && m.tool_calls && m.tool_calls.length > 0) {
      const calls = m.tool_calls
        .map(
          (c) =>
            `<tool_call>\n{"name": ${JSON.stringify(c.function.name)}, "arguments": ${c.function.arguments || '{}'}}\n</tool_call>`,
        )
        .join('\n');
      out.push({ role: 'assistant', content: [textOf(m.content), calls].filter(Boolean).join('\n') });
    } else if (m.role === 'tool') {
      out.push({ role: 'user', content: `<tool_response>\n${textOf(m.content)}\n</tool_response>` });
    } else out.push(m);
  }
  if (out[0]?.role === 'system') out[0] = { ...out[0], content: `${textOf(out[0].content)}\n\n${prompt}` };
  else out.unshift({ role: 'system', content: prompt });
  return out;
}
