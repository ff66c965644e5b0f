/**
 * Chat templates: renders a conversation with the model's own Jinja template (`tokenizer.chat_template`, or a named
 * `tokenizer.chat_template.<name>`) through `@huggingface/jinja`, falling back to ChatML when the file has none. The
 * result carries the template's identity (SHA-256 of its text) and the stop strings / end-of-generation ids to use.
 * Template errors and the template's own `raise_exception` become `LlmError('template')`.
 */

import { Environment } from '@huggingface/jinja';
import { LlmError } from '../errors.js';
import type { GgufValue } from '../gguf/types.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { type ChatMessage, validateMessages } from './messages.js';
import { sha256Hex } from '../io/sha256.js';
import { strftime } from './strftime.js';
import { ChatInterpreter } from './jinja-interpreter.js';
import {
  PROBE_TEMPLATE_BUDGET,
  resolveTemplateBudget,
  type ResolvedTemplateBudget,
  type TemplateBudget,
} from './template-budget.js';
import { compileTemplate, type CompiledTemplate } from './template-compile.js';
import { isOverBudget, setGlobals, templateCaps, type TemplateCaps } from './template-caps.js';
import { buildTemplateContext, type TemplateRequest } from './template-inputs.js';
import { completePromptForFamily, FAMILIES_WITH_THINKING, templateFamily } from './template-families.js';
import { renderContinuation } from './template-continue.js';

/** ChatML, used when a model has no template (`<|im_start|>role\ncontent<|im_end|>\n`). */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}" +
  "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** Turn-end markers that become stop strings when the template writes them. */
const TURN_END_MARKERS = [
  '<|im_end|>',
  '<|eot_id|>',
  '<|eom_id|>',
  '<end_of_turn>',
  '<|end|>',
  '<|endoftext|>',
  '<|end_of_text|>',
  '<｜end▁of▁sentence｜>',
  '<turn|>',
  '</s>',
];

/** Where the template came from. */
export type TemplateSource = 'explicit' | 'metadata' | 'named' | 'chatml-fallback';

/** Options of `renderChat`. */
export interface RenderChatOptions {
  /** Template text to use instead of the model's. */
  readonly template?: string;
  /** GGUF metadata; `tokenizer.chat_template` (or `.name`) is read from it. */
  readonly metadata?: Readonly<Record<string, GgufValue>>;
  /** Use the named template `tokenizer.chat_template.<name>` (e.g. 'tool_use'); missing → `LlmError('template')`. */
  readonly templateName?: string;
  /** The model's tokenizer: gives `bos_token`/`eos_token` and the end-of-generation ids. */
  readonly tokenizer?: Tokenizer;
  /** End with the assistant's turn header (default true). */
  readonly addGenerationPrompt?: boolean;
  /** Tool definitions passed to the template as `tools` (templates that support tools render them). */
  readonly tools?: readonly unknown[];
  /** Per-request template variables over llama.cpp's defaults (e.g. `{enable_thinking: false}`). */
  readonly chatTemplateKwargs?: Readonly<Record<string, unknown>>;
  /** Limits of the render (range sizes, loop iterations, output, wall time). */
  readonly budget?: TemplateBudget;
  /** Stops the render (checked while it runs). */
  readonly signal?: AbortSignal;
  /** Remove a leading BOS text (default: the tokenizer's `addBos`; the tokenizer then adds the BOS token). */
  readonly stripBos?: boolean;
  /** Remove a trailing EOS text (default: the tokenizer's `addEos`). */
  readonly stripEos?: boolean;
  /** Override the BOS / EOS strings (default: the tokenizer's token texts, else ''). */
  readonly bosToken?: string;
  readonly eosToken?: string;
  /** Extra template variables (e.g. `date_string`); `chatTemplateKwargs` wins over them. */
  readonly variables?: Readonly<Record<string, unknown>>;
  /** Clock for `strftime_now` (default: now). */
  readonly now?: Date;
  /**
   * A conversation ending with an assistant message continues that message (default true, as llama-server's
   * `--prefill-assistant`): no new assistant turn is opened, the model goes on from its text.
   */
  readonly continueFinalMessage?: boolean;
}

/** A rendered conversation. */
export interface RenderedChat {
  /** The prompt text, special markers included as text. */
  readonly prompt: string;
  /** SHA-256 (hex) of the template text: the template's identity, e.g. for prompt caches. */
  readonly templateHash: string;
  readonly templateSource: TemplateSource;
  /** What the template supports (probed as llama.cpp probes it). */
  readonly caps: TemplateCaps;
  /** Strings that end the assistant's turn. */
  readonly stopStrings: readonly string[];
  /** End-of-generation token ids (when a tokenizer was given). */
  readonly eogTokenIds?: readonly number[];
}

/** Picks the template text: explicit, named, the model's, or ChatML. */
export function selectTemplate(options: RenderChatOptions): { text: string; source: TemplateSource } {
  if (options.template !== undefined) {
    if (typeof options.template !== 'string') throw new LlmError('template', 'chat template must be a string');
    return { text: options.template, source: 'explicit' };
  }
  const meta = options.metadata;
  const read = (key: string): string | undefined => {
    const v = meta && Object.hasOwn(meta, key) ? meta[key] : undefined;
    return typeof v === 'string' ? v : undefined;
  };
  if (options.templateName !== undefined) {
    const text = read(`tokenizer.chat_template.${options.templateName}`);
    if (text === undefined) {
      throw new LlmError(
        'template',
        `the model has no chat template named '${options.templateName}' (tokenizer.chat_template.${options.templateName})`,
        {
          details: { name: options.templateName },
        },
      );
    }
    return { text, source: 'named' };
  }
  const text = read('tokenizer.chat_template');
  return text !== undefined ? { text, source: 'metadata' } : { text: CHATML_TEMPLATE, source: 'chatml-fallback' };
}

const thinkingCache = new WeakMap<CompiledTemplate, boolean>();

const BUILT_IN_NAMES = new Set([
  'messages',
  'tools',
  'bos_token',
  'eos_token',
  'add_generation_prompt',
  'range',
  'raise_exception',
  'strftime_now',
]);

/**
 * Whether a template supports reasoning, which llama.cpp's server turns into the default of `enable_thinking` (true
 * when supported, else false). llama.cpp decides it by diffing renders for reasoning markers (its autoparser); the
 * same signals are read here: llama.cpp's dedicated handler for the family declares it, the template shows an
 * assistant's `reasoning_content` or writes a think tag, or switching `enable_thinking` changes the generation prompt
 * around a think-like marker.
 */
export function templateSupportsThinking(t: CompiledTemplate): boolean {
  const hit = thinkingCache.get(t);
  if (hit !== undefined) return hit;
  const caps = templateCaps(t);
  let hostile = false;
  const render = (messages: unknown[], on: boolean, addGenerationPrompt: boolean): string | undefined => {
    if (hostile) return undefined;
    try {
      return renderCompiled(
        t,
        caps,
        { messages, bosToken: '', eosToken: '', enableThinkingDefault: on, addGenerationPrompt, now: new Date(0) },
        { budget: PROBE_TEMPLATE_BUDGET },
      );
    } catch (e) {
      hostile = isOverBudget(e);
      return undefined;
    }
  };
  const mark = 'REASONING_MARK_7f3a';
  const history = [
    { role: 'user', content: 'U1' },
    { role: 'assistant', content: 'A1', reasoning_content: mark },
  ];
  const family = templateFamily(t.source);
  let result =
    (family !== undefined && FAMILIES_WITH_THINKING.has(family)) || (render(history, true, false) ?? '').includes(mark);
  if (!result && family !== 'gigachat-v3')
    result = /<think>|<\/think>|\[THINK\]|\[\/THINK\]|<\|think\|>|<seed:think>/.test(t.source);
  if (!result) {
    const one = [{ role: 'user', content: 'test' }];
    const on = render(one, true, true);
    const off = render(one, false, true);
    if (on !== undefined && off !== undefined && on !== off) {
      let i = 0;
      while (i < on.length && i < off.length && on[i] === off[i]) i++;
      result = /think|reason/i.test(on.slice(i) + off.slice(i));
    }
  }
  thinkingCache.set(t, result);
  return result;
}

/** Renders prepared inputs with a compiled template (no validation, no BOS handling). */
function renderCompiled(
  t: CompiledTemplate,
  caps: TemplateCaps,
  req: TemplateRequest,
  opts: { budget: ResolvedTemplateBudget; signal?: AbortSignal },
): string {
  const env = new Environment();
  const interp = new ChatInterpreter(env, {
    budget: opts.budget,
    lines: t.lines,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  setGlobals(env, interp, req.now, strftime);
  const vars = buildTemplateContext(req, caps, t.source);
  for (const [k, v] of Object.entries(vars)) {
    if (['true', 'false', 'none', 'True', 'False', 'None', 'range', 'raise_exception', 'strftime_now'].includes(k))
      continue;
    env.set(k, v);
  }
  const out = String((interp.run(t.program) as unknown as { value: unknown }).value);
  return completePromptForFamily(templateFamily(t.source), out, req.addGenerationPrompt ?? true);
}

/**
 * Renders `messages` with the model's chat template, as llama.cpp renders it (see `template-inputs.ts`): validates
 * the conversation first (`LlmError('invalid-request')`); template failures, budget overruns and `raise_exception`
 * are `LlmError('template')` naming the construct and line. The leading BOS text is removed when the vocabulary adds
 * BOS itself (`stripBos`), so `prompt` is exactly the text that is tokenised.
 */
export function renderChat(messages: readonly ChatMessage[], options: RenderChatOptions = {}): RenderedChat {
  const valid = validateMessages(messages);
  const { text, source } = selectTemplate(options);
  const compiled = compileTemplate(text);
  const caps = templateCaps(compiled);
  const tok = options.tokenizer;
  const tokenString = (id: number | null | undefined): string =>
    tok && id !== null && id !== undefined ? tok.tokenText(id) : '';
  const bos = options.bosToken ?? tokenString(tok?.bosId);
  const eos = options.eosToken ?? tokenString(tok?.eosId);
  const kwargs: Record<string, unknown> = {};
  // `variables` never replace the conversation or the renderer's own names; `chatTemplateKwargs` are validated by callers
  for (const [k, v] of Object.entries(options.variables ?? {})) if (!BUILT_IN_NAMES.has(k)) kwargs[k] = v;
  Object.assign(kwargs, options.chatTemplateKwargs ?? {});
  const request: TemplateRequest = {
    messages: valid,
    ...(options.tools !== undefined ? { tools: options.tools } : {}),
    chatTemplateKwargs: kwargs,
    addGenerationPrompt: options.addGenerationPrompt ?? true,
    bosToken: bos,
    eosToken: eos,
    enableThinkingDefault: templateSupportsThinking(compiled),
    now: options.now ?? new Date(),
  };
  const renderOpts = {
    budget: resolveTemplateBudget(options.budget),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const render = (r: TemplateRequest): string => renderCompiled(compiled, caps, r, renderOpts);
  let prompt =
    (options.continueFinalMessage ?? true) && valid[valid.length - 1].role === 'assistant'
      ? renderContinuation(compiled, caps, request, render, request.enableThinkingDefault)
      : render(request);
  if ((options.stripBos ?? tok?.addBos ?? false) && bos !== '' && prompt.startsWith(bos))
    prompt = prompt.slice(bos.length);
  if ((options.stripEos ?? tok?.addEos ?? false) && eos !== '' && prompt.endsWith(eos))
    prompt = prompt.slice(0, -eos.length);

  const stop = new Set<string>();
  const eog = tok ? [...tok.eogIds].sort((a, b) => a - b) : undefined;
  for (const id of eog ?? []) stop.add(tok!.tokenText(id));
  for (const m of TURN_END_MARKERS) if (text.includes(m)) stop.add(m);
  if (eos) stop.add(eos);
  return {
    prompt,
    templateHash: sha256Hex(text),
    templateSource: source,
    stopStrings: [...stop],
    caps,
    ...(eog ? { eogTokenIds: eog } : {}),
  };
}
