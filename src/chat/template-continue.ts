/**
 * Continuing a trailing assistant message (llama-server's default `--prefill-assistant`): the conversation before it
 * is rendered without the generation prompt, then the template's own generation prompt is appended (the difference
 * between rendering with and without it), then — for templates with reasoning — the reasoning markers around the
 * message's `reasoning_content`, then its content. The model goes on from there.
 *
 * llama.cpp finds the reasoning markers with its autoparser; here they come from the template itself: the tags
 * around an assistant's reasoning in a rendered history (whitespace included), else the think tag the generation
 * prompt opens (tags alone).
 */

import { LlmError } from '../errors.js';
import type { TemplateCaps } from './template-caps.js';
import type { CompiledTemplate } from './template-compile.js';
import { templateFamily, type TemplateFamily } from './template-families.js';
import type { TemplateRequest } from './template-inputs.js';

/** Renders prepared inputs (see `renderCompiled`). */
export type RenderFn = (req: TemplateRequest) => string;

interface Markers {
  start: string;
  end: string;
}

const markerCache = new WeakMap<CompiledTemplate, Markers | null>();

const START_TAG = /(<[a-z_]*:?think(?::[a-z_]+)?>|\[THINK\]|<\|START_THINKING\|>)\s*$/i;
const END_TAG = /^\s*(<\/[a-z_]*:?think(?::[a-z_]+)?>|\[\/THINK\]|<\|END_THINKING\|>)\s*/i;
const OPEN_TAG = /<([a-z_]*:?think(?::[a-z_]+)?)>|\[THINK\]|<\|START_THINKING\|>/i;
const closeOf = (open: string): string =>
  open === '[THINK]' ? '[/THINK]' : open === '<|START_THINKING|>' ? '<|END_THINKING|>' : `</${open.slice(1)}`;

/**
 * Families with a dedicated llama.cpp handler write the continuation themselves (common/parsers/*.cpp):
 * `gen` is the template's generation prompt, `content` undefined when only the reasoning is continued.
 */
const FAMILY_CONTINUATION: Partial<
  Record<
    TemplateFamily,
    (gen: string, reasoning: string, content: string | undefined, prompt: string, src: string) => string
  >
> = {
  'gpt-oss': (_g, r, c) =>
    `<|start|>assistant<|channel|>analysis<|message|>${r}${c !== undefined ? `<|end|><|start|>assistant<|channel|>final<|message|>${c}` : ''}`,
  'functionary-v3.2': (_g, _r, c, _p, _s) => `<|start_header_id|>assistant<|end_header_id|>\n\n>>>all\n${c ?? ''}`,
  'kimi-k2': (_g, r, c) => `<|im_assistant|>assistant<|im_middle|><think>${r}${c !== undefined ? `</think>${c}` : ''}`,
  'kimi-k3': (_g, r, c) =>
    `<|open|>message role="assistant"<|sep|><|open|>think<|sep|>${r}${c !== undefined ? `<|close|>think<|sep|><|open|>response<|sep|>${c}` : ''}`,
  lfm2: (_g, r, c) => `<|im_start|>assistant\n<think>${r}${c !== undefined ? `</think>${c}` : ''}`,
  cohere2moe: (_g, r, c) =>
    `<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|><|START_THINKING|>${r}${c !== undefined ? `<|END_THINKING|><|START_TEXT|>${c}` : ''}`,
  'deepseek-v3.2': (_g, r, c) => `<｜Assistant｜><think>${r}${c !== undefined ? `</think>${c}` : ''}`,
  'deepseek-v4': (_g, r, c) =>
    r === ''
      ? `<｜Assistant｜></think>${c ?? ''}`
      : `<｜Assistant｜><think>${r}${c !== undefined ? `</think>${c}` : ''}`,
  ling3: (_g, r, c) => `<role>ASSISTANT</role>\n<think>${r}${c !== undefined ? `</think>${c}` : ''}`,
  minicpm5: (_g, r, c) => `<|im_start|>assistant\n<think>\n${r}${c !== undefined ? `\n</think>\n\n${c}` : ''}`,
  'minimax-m3': (g, r, c) => `${g}<mm:think>${r}${c !== undefined ? `</mm:think>${c}` : ''}`,
  ministral3: (_g, r, c) => `[THINK]${r}${c !== undefined ? `[/THINK]${c}` : ''}`,
  'muse-glimmer': (_g, r, c) =>
    `<|start|>assistant to=self<|message|>${r}${c !== undefined ? `<|eom|><|start|>assistant to=user<|message|>${c}` : ''}`,
  'gigachat-v3': (_g, _r, c) => `assistant<|role_sep|>\n${c ?? ''}`,
  'qwen3-coder': (_g, r, c, _p, src) =>
    `<|im_start|>assistant\n${src.includes('<think>') ? `<think>\n${r}${c !== undefined ? '\n</think>\n\n' : ''}` : ''}${c ?? ''}`,
  gemma4: (_g, r, c, p) =>
    `${p.endsWith('<turn|>\n') ? '<|turn>model\n' : ''}<|channel>thought\n${r}${c !== undefined ? `<channel|>${c}` : ''}`,
  'gemma4-outdated': (_g, r, c, p) =>
    `${p.endsWith('<turn|>\n') ? '<|turn>model\n' : ''}<|channel>thought\n${r}${c !== undefined ? `<channel|>${c}` : ''}`,
};

function reasoningMarkers(t: CompiledTemplate, render: RenderFn, base: TemplateRequest): Markers | null {
  if (markerCache.has(t)) return markerCache.get(t) ?? null;
  let found: Markers | null = null;
  const mark = 'REASONING_MARK_5c1d';
  try {
    // 1. the tags around an assistant's reasoning in a rendered history (whitespace included)
    for (const tail of [[], [{ role: 'user', content: 'U2' }]]) {
      if (found) break;
      const out = render({
        ...base,
        messages: [
          { role: 'user', content: 'U1' },
          { role: 'assistant', content: 'C1', reasoning_content: mark },
          ...tail,
        ],
        addGenerationPrompt: false,
        enableThinkingDefault: true,
        chatTemplateKwargs: {},
      });
      const i = out.indexOf(mark);
      if (i >= 0) {
        const st = START_TAG.exec(out.slice(0, i));
        const e = END_TAG.exec(out.slice(i + mark.length));
        if (st && e) found = { start: st[0], end: e[0] };
      }
    }
    // 2. the think tag the generation prompt opens (tags alone), 3. think tags in the template text
    if (!found) {
      const gen = render({
        ...base,
        messages: [{ role: 'user', content: 'U1' }],
        addGenerationPrompt: true,
        enableThinkingDefault: true,
        chatTemplateKwargs: {},
      });
      const m = OPEN_TAG.exec(gen);
      if (m) found = { start: m[0], end: closeOf(m[0]) };
    }
    if (!found) {
      const m = OPEN_TAG.exec(t.source);
      if (m && t.source.includes(closeOf(m[0]))) found = { start: m[0], end: closeOf(m[0]) };
    }
  } catch {
    found = null;
  }
  markerCache.set(t, found);
  return found;
}

const text = (c: unknown): string =>
  typeof c === 'string'
    ? c
    : Array.isArray(c)
      ? c
          .filter((p) => (p as { type?: unknown }).type === 'text')
          .map((p) => String((p as { text?: unknown }).text ?? ''))
          .join('\n\n')
      : '';

/**
 * The prompt for `req` whose last message is an assistant message to continue. `supportsThinking`: whether the
 * template supports reasoning (its markers are then written around the message's reasoning).
 */
export function renderContinuation(
  t: CompiledTemplate,
  _caps: TemplateCaps,
  req: TemplateRequest,
  render: RenderFn,
  supportsThinking: boolean,
): string {
  const msgs = req.messages as readonly Record<string, unknown>[];
  const last = msgs[msgs.length - 1];
  if (msgs.length >= 2 && msgs[msgs.length - 2].role === 'assistant') {
    throw new LlmError(
      'invalid-request',
      'continuing the last assistant message: the conversation ends with two assistant messages; merge them',
      {
        details: { field: 'messages' },
      },
    );
  }
  if (Array.isArray(last.tool_calls) && last.tool_calls.length > 0) {
    throw new LlmError(
      'invalid-request',
      'continuing the last assistant message: it makes tool calls, which cannot be continued; end with the tool results',
      {
        details: { field: 'messages' },
      },
    );
  }
  const reasoning = typeof last.reasoning_content === 'string' ? last.reasoning_content : '';
  const content = text(last.content);
  const continueReasoning = reasoning !== '' && content === '';
  const head = { ...req, messages: msgs.slice(0, -1) };
  const without = render({ ...head, addGenerationPrompt: false });
  const withGen = render({ ...head, addGenerationPrompt: true });
  let i = 0;
  while (i < without.length && i < withGen.length && without[i] === withGen[i]) i++;
  let gen = withGen.slice(i);
  const family = templateFamily(t.source);
  const special = family ? FAMILY_CONTINUATION[family] : undefined;
  if (special) return without + special(gen, reasoning, continueReasoning ? undefined : content, without, t.source);
  const markers = supportsThinking ? reasoningMarkers(t, render, req) : null;
  if (markers) {
    let { start, end } = markers;
    let at = gen.indexOf(start);
    if (at < 0 && start.trim() !== start && gen.includes(start.trim())) {
      // the generation prompt opens the tag without the whitespace the history has: the tags alone
      start = start.trim();
      end = end.trim();
      at = gen.indexOf(start);
    }
    if (at >= 0) gen = gen.slice(0, at);
    gen += start + reasoning;
    if (!continueReasoning) gen += end;
  }
  if (!continueReasoning) gen += content;
  return without + gen;
}
