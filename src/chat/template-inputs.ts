/**
 * The variables a chat template is rendered with, built from an OpenAI-shaped conversation exactly as llama.cpp's
 * `common/chat.cpp` builds them (so prompts match what models were tested with under llama.cpp):
 * - each message becomes `{role, content, reasoning_content?, name?, tool_call_id?, tool_calls?}` — content `''` when
 *   absent or null; typed content parts kept or joined with '\n' depending on what the template accepts; tool-call
 *   arguments kept as the JSON text, or parsed to an object when the template reads arguments as a mapping;
 * - `developer` messages become `system` (except for gpt-oss templates, which know `developer`);
 * - a system message is folded into the first user message ("system\nuser") when the template ignores or refuses
 *   the system role;
 * - `tools` as `{type: 'function', function: {name, description, parameters}}`, only when there are tools;
 * - `bos_token`, `eos_token`, `enable_thinking`, `add_generation_prompt` (only when true), `date_string`
 *   ("01 Dec 2026"), `datetime` ("Dec 01 2026"), then `chat_template_kwargs` over all of these.
 */

import { LlmError } from '../errors.js';
import { strftime } from './strftime.js';
import type { TemplateCaps } from './template-caps.js';
import { adjustMessagesForFamily, templateFamily } from './template-families.js';

/** Inputs of one render. */
export interface TemplateRequest {
  /** OpenAI-shaped messages (validated by `validateMessages`). */
  readonly messages: readonly unknown[];
  /** OpenAI tool definitions (`{type: 'function', function: {name, description?, parameters?}}`). */
  readonly tools?: readonly unknown[];
  /** Variables over the defaults (e.g. `{enable_thinking: false}`), as llama.cpp's `chat_template_kwargs`. */
  readonly chatTemplateKwargs?: Readonly<Record<string, unknown>>;
  readonly addGenerationPrompt?: boolean;
  readonly bosToken: string;
  readonly eosToken: string;
  /** Default of `enable_thinking` when the kwargs do not set it (llama.cpp: whether the template supports it). */
  readonly enableThinkingDefault: boolean;
  readonly now: Date;
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Msg = Record<string, Json>;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function invalid(message: string): LlmError {
  return new LlmError('invalid-request', `building the chat template inputs: ${message}`);
}

/** Joins typed parts as llama.cpp does for templates that only take string content. */
function joinParts(parts: readonly Json[]): string {
  let text = '';
  for (const p of parts) {
    if (p && typeof p === 'object' && !Array.isArray(p) && p.type === 'text') {
      if (text.length > 0) text += '\n';
      text += str(p.text);
    }
  }
  return text;
}

/** One message as llama.cpp's `to_json_oaicompat` writes it. */
function toTemplateMessage(m: Record<string, unknown>): Msg {
  const out: Msg = { role: str(m.role) };
  const c = m.content;
  if (typeof c === 'string' && c !== '') out.content = c;
  else if (Array.isArray(c) && c.length > 0) {
    out.content = c.map((p) => {
      const part = p as Record<string, unknown>;
      return { type: str(part.type), text: str(part.text) };
    });
  } else out.content = '';
  if (typeof m.reasoning_content === 'string' && m.reasoning_content !== '')
    out.reasoning_content = m.reasoning_content;
  if (typeof m.name === 'string' && m.name !== '') out.name = m.name;
  if (typeof m.tool_call_id === 'string' && m.tool_call_id !== '') out.tool_call_id = m.tool_call_id;
  const calls = m.tool_calls;
  if (Array.isArray(calls) && calls.length > 0) {
    out.tool_calls = calls.map((tc) => {
      const call = tc as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
      const args = call.function?.arguments;
      const o: Msg = {
        type: 'function',
        function: {
          name: str(call.function?.name),
          arguments: typeof args === 'string' ? args : JSON.stringify(args ?? null),
        },
      };
      if (typeof call.id === 'string' && call.id !== '') o.id = call.id;
      return o;
    });
  }
  return out;
}

/** OpenAI tools → the shape llama.cpp passes to templates. */
function toTemplateTools(tools: readonly unknown[] | undefined): Json[] | undefined {
  if (!tools || tools.length === 0) return undefined;
  return tools.map((t, i) => {
    const tool = t as {
      type?: unknown;
      function?: { name?: unknown; description?: unknown; parameters?: unknown };
    } | null;
    if (!tool || typeof tool !== 'object' || tool.type !== 'function' || typeof tool.function?.name !== 'string') {
      throw invalid(`tools[${i}] must be {type: 'function', function: {name, description?, parameters?}}`);
    }
    const f = tool.function;
    return {
      type: 'function',
      function: {
        name: f.name as string,
        description: typeof f.description === 'string' ? f.description : '',
        parameters: (f.parameters ?? {}) as Json,
      },
    };
  });
}

/** The template's variables for one request (see the module comment). */
export function buildTemplateContext(
  req: TemplateRequest,
  caps: TemplateCaps,
  source: string,
): Record<string, unknown> {
  let messages: Msg[] = req.messages.map((m) => toTemplateMessage(m as Record<string, unknown>));
  if (/You have access to the following functions in JSONSchema format/.test(source)) {
    // StepFun: llama.cpp trims message texts before rendering
    messages = messages.map((m) => ({
      ...m,
      ...(typeof m.content === 'string' ? { content: m.content.trim() } : {}),
      ...(typeof m.reasoning_content === 'string' ? { reasoning_content: m.reasoning_content.trim() } : {}),
    }));
  }
  const onlyString = caps.supportsStringContent && !caps.supportsTypedContent;
  const onlyTyped = !caps.supportsStringContent && caps.supportsTypedContent;
  messages = messages.map((m) => {
    if (onlyTyped && typeof m.content === 'string') return { ...m, content: [{ type: 'text', text: m.content }] };
    if (onlyString && Array.isArray(m.content)) return { ...m, content: joinParts(m.content) };
    return m;
  });
  if (!source.includes('<|channel|>')) {
    messages = messages.map((m) => (m.role === 'developer' ? { ...m, role: 'system' } : m));
  }
  if (!caps.supportsSystemRole && messages.length > 0 && messages[0].role === 'system') {
    const [sys, ...rest] = messages;
    if (rest.length > 0) {
      const text = (c: Json | undefined): string => (typeof c === 'string' ? c : Array.isArray(c) ? joinParts(c) : '');
      rest[0] = { ...rest[0], content: `${text(sys.content)}\n${text(rest[0].content)}` };
    }
    messages = rest;
  }
  if (caps.supportsObjectArguments) {
    messages = messages.map((m) => {
      if (!Array.isArray(m.tool_calls)) return m;
      return {
        ...m,
        tool_calls: m.tool_calls.map((tc) => {
          const call = tc as { [k: string]: Json } & { function: { [k: string]: Json } };
          const args = call.function.arguments;
          if (typeof args !== 'string') return call;
          let parsed: Json;
          try {
            parsed = JSON.parse(args) as Json;
          } catch (e) {
            throw invalid(
              `tool call arguments must be JSON, got ${JSON.stringify(args.slice(0, 80))} (${(e as Error).message})`,
            );
          }
          return { ...call, function: { ...call.function, arguments: parsed } };
        }),
      };
    });
  }
  messages = adjustMessagesForFamily(templateFamily(source), messages);
  const ctx: Record<string, unknown> = {
    messages,
    bos_token: req.bosToken,
    eos_token: req.eosToken,
    enable_thinking: req.enableThinkingDefault,
  };
  const tools = toTemplateTools(req.tools);
  if (tools) ctx.tools = tools;
  ctx.datetime = strftime(req.now, '%b %d %Y');
  ctx.date_string = strftime(req.now, '%d %b %Y');
  const kwargs = req.chatTemplateKwargs ?? {};
  for (const [k, v] of Object.entries(kwargs)) ctx[k] = v;
  if (typeof kwargs.enable_thinking === 'boolean') ctx.enable_thinking = kwargs.enable_thinking;
  if (req.addGenerationPrompt ?? true) ctx.add_generation_prompt = true;
  if (typeof ctx.preserve_reasoning === 'boolean') {
    const on = ctx.preserve_reasoning;
    Object.assign(ctx, {
      preserve_thinking: on,
      clear_thinking: !on,
      truncate_history_thinking: !on,
      drop_thinking: !on,
    });
  }
  if (typeof ctx.reasoning_effort === 'string' && ctx.reasoning_effort !== '')
    ctx.reasoning_strength = ctx.reasoning_effort;
  return ctx;
}
