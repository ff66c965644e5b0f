/**
 * Model families whose templates llama.cpp feeds adjusted messages or whose prompt it completes
 * (`common_chat_try_specialized_template` in common/chat.cpp and common/parsers/): detected from the template text
 * in llama.cpp's order, the adjustments repeated here so prompts match.
 * - Ministral/Magistral 3: system and assistant content become typed blocks, reasoning a `thinking` block;
 * - gpt-oss, LFM2 / LFM2.5: `reasoning_content` is also passed as `thinking` (gpt-oss drops `content` of a message
 *   with tool calls and reasoning);
 * - DeepSeek V4: consecutive tool results ordered by the preceding assistant's tool-call order;
 * - Gemma 4: older templates get `assistant(tool_calls) → tool… → assistant` runs merged into one assistant message
 *   with `tool_responses`; a prompt ending in `<turn|>\n` gets the model turn `<|turn>model\n` appended.
 */

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Msg = { [k: string]: Json };

/** A family llama.cpp handles with a dedicated renderer/parser, or undefined (its generic path). */
export type TemplateFamily =
  | 'ministral3'
  | 'gpt-oss'
  | 'muse-glimmer'
  | 'functionary-v3.2'
  | 'kimi-k2'
  | 'kimi-k3'
  | 'ling3'
  | 'cohere2moe'
  | 'lfm2'
  | 'gigachat-v3'
  | 'minimax-m3'
  | 'deepseek-v4'
  | 'deepseek-v3.2'
  | 'gemma4'
  | 'gemma4-outdated'
  | 'minicpm5'
  | 'qwen3-coder';

/** Families whose llama.cpp handler declares reasoning support (so `enable_thinking` defaults to true). */
export const FAMILIES_WITH_THINKING: ReadonlySet<TemplateFamily> = new Set<TemplateFamily>([
  'ministral3',
  'gpt-oss',
  'muse-glimmer',
  'kimi-k2',
  'kimi-k3',
  'ling3',
  'cohere2moe',
  'lfm2',
  'minimax-m3',
  'deepseek-v4',
  'deepseek-v3.2',
  'gemma4',
  'gemma4-outdated',
  'minicpm5',
]);

const has = (s: string, ...parts: string[]): boolean => parts.every((p) => s.includes(p));

/** Detects the family as llama.cpp does (first match wins). */
export function templateFamily(src: string): TemplateFamily | undefined {
  if (has(src, '[SYSTEM_PROMPT]', '[TOOL_CALLS]', '[ARGS]') && !src.includes('[CALL_ID]')) return 'ministral3';
  if (src.includes('<|channel|>')) return 'gpt-oss';
  if (has(src, '<atem:function_calls>', '<|eom|>')) return 'muse-glimmer';
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the Jinja source literally contains ${recipient}
  if (has(src, '>>>all', '>>>${recipient}')) return 'functionary-v3.2';
  if (has(src, '<|tool_calls_section_begin|>', '<|tool_call_begin|>')) return 'kimi-k2';
  if (has(src, '<|open|>', '<|close|>', '<|end_of_msg|>')) return 'kimi-k3';
  if (has(src, '<role>ASSISTANT</role>', '<arg_key>')) return 'ling3';
  if (has(src, '<|START_TEXT|>', '<|START_ACTION|>')) return 'cohere2moe';
  if (has(src, '<|tool_list_start|>', '<|tool_list_end|>')) return 'lfm2';
  if (src.includes('List of tools: [') && !src.includes('<|tool_list_start|>')) return 'lfm2';
  if (has(src, '<|role_sep|>', '<|message_sep|>') && !src.includes('<|function_call|>')) return 'gigachat-v3';
  if (has(src, ']<]minimax[>[', '<tool_call>', '<invoke name=')) return 'minimax-m3';
  if (has(src, 'dsml_token', 'DSML') && (src.includes('function_calls') || src.includes('tool_calls'))) {
    return src.includes('function_calls') ? 'deepseek-v3.2' : 'deepseek-v4';
  }
  if (src.includes("'<|tool_call>call:'"))
    return src.includes('{#- OpenAI Chat Completions:') ? 'gemma4' : 'gemma4-outdated';
  if (has(src, 'Tool usage guidelines:', '<function name="', '<param name="')) return 'minicpm5';
  if (
    has(src, '<tool_call>', '<function=', '<parameter=') &&
    !src.includes("'<tool_call><function=' ~ tool_call.name ~ '>'")
  ) {
    return 'qwen3-coder';
  }
  return undefined;
}

const isStr = (v: Json | undefined): v is string => typeof v === 'string';
const calls = (m: Msg): Json[] | undefined =>
  Array.isArray(m.tool_calls) && m.tool_calls.length > 0 ? m.tool_calls : undefined;

function ministral3(messages: Msg[]): Msg[] {
  return messages.map((m) => {
    if (m.role !== 'system' && m.role !== 'assistant') return m;
    const content: Json[] = [];
    if (isStr(m.reasoning_content)) content.push({ type: 'thinking', thinking: m.reasoning_content });
    if (isStr(m.content)) content.push({ type: 'text', text: m.content });
    else if (Array.isArray(m.content)) content.push(...m.content);
    const out: Msg = { ...m, content };
    delete out.reasoning_content;
    return out;
  });
}

function withThinking(messages: Msg[], dropContentWithCalls: boolean): Msg[] {
  return messages.map((m) => {
    if (!isStr(m.reasoning_content)) return m;
    const out: Msg = { ...m, thinking: m.reasoning_content };
    if (dropContentWithCalls && calls(m)) delete out.content;
    return out;
  });
}

function deepseekV4(messages: Msg[]): Msg[] {
  const out = [...messages];
  let order = new Map<string, number>();
  for (let i = 0; i < out.length; ) {
    const m = out[i];
    const tc = m.role === 'assistant' ? calls(m) : undefined;
    if (tc) {
      order = new Map();
      tc.forEach((c, k) => {
        const id = (c as Msg).id;
        if (isStr(id) && id !== '') order.set(id, k);
      });
      i++;
      continue;
    }
    if (m.role !== 'user' && m.role !== 'tool') {
      i++;
      continue;
    }
    const positions: number[] = [];
    let end = i;
    for (; end < out.length; end++) {
      if (out[end].role === 'tool') positions.push(end);
      else if (out[end].role !== 'user') break;
    }
    if (positions.length > 1 && order.size > 0) {
      const rank = (x: Msg): number => order.get(isStr(x.tool_call_id) ? x.tool_call_id : '') ?? 0;
      const sorted = positions.map((p) => out[p]).sort((a, b) => rank(a) - rank(b));
      positions.forEach((p, k) => (out[p] = sorted[k]));
    }
    i = end;
  }
  return out;
}

function gemma4ToolResponses(messages: Msg[]): Msg[] {
  const result: Msg[] = [];
  for (let i = 0; i < messages.length; ) {
    const m = messages[i];
    const tc = m.role === 'assistant' ? calls(m) : undefined;
    if (!tc) {
      result.push(m);
      i++;
      continue;
    }
    const toolCalls = [...tc];
    const responses: Json[] = [];
    const reasoning = isStr(m.reasoning_content) ? m.reasoning_content : undefined;
    let content: Json | undefined;
    i++;
    while (i < messages.length && messages[i].role === 'tool') {
      const t = messages[i];
      let response: Json = null;
      if ('content' in t) {
        if (isStr(t.content)) {
          try {
            response = JSON.parse(t.content) as Json;
          } catch {
            response = t.content;
          }
        } else response = t.content;
      }
      const call = toolCalls[responses.length] as Msg | undefined;
      let name =
        call &&
        typeof call.function === 'object' &&
        call.function &&
        !Array.isArray(call.function) &&
        isStr(call.function.name)
          ? call.function.name
          : '';
      if (name === '') name = isStr(t.tool_call_id) ? t.tool_call_id : '';
      responses.push({ name, response });
      i++;
    }
    if (i < messages.length && messages[i].role === 'assistant') {
      const next = messages[i];
      const c = next.content;
      const hasContent = (isStr(c) && c !== '') || (Array.isArray(c) && c.length > 0);
      if (!calls(next) && hasContent) {
        content = c;
        i++;
      }
    }
    const msg: Msg = { role: 'assistant', tool_calls: toolCalls };
    if (responses.length > 0) msg.tool_responses = responses;
    if (content !== undefined) msg.content = content;
    if (reasoning !== undefined) msg.reasoning_content = reasoning;
    result.push(msg);
  }
  return result;
}

/** The messages llama.cpp renders for this family. */
export function adjustMessagesForFamily(family: TemplateFamily | undefined, messages: Msg[]): Msg[] {
  switch (family) {
    case 'ministral3':
      return ministral3(messages);
    case 'gpt-oss':
      return withThinking(messages, true);
    case 'lfm2':
      return withThinking(messages, false);
    case 'deepseek-v4':
      return deepseekV4(messages);
    case 'gemma4-outdated':
      return gemma4ToolResponses(messages);
    default:
      return messages;
  }
}

/** The prompt llama.cpp returns for this family (Gemma 4: the model turn after a closed turn). */
export function completePromptForFamily(
  family: TemplateFamily | undefined,
  prompt: string,
  addGenerationPrompt: boolean,
): string {
  if ((family === 'gemma4' || family === 'gemma4-outdated') && addGenerationPrompt && prompt.endsWith('<turn|>\n')) {
    return `${prompt}<|turn>model\n`;
  }
  return prompt;
}
