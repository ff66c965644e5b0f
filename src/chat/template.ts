/**
 * Chat templates: renders a conversation with the model's own Jinja template (`tokenizer.chat_template`, or a named
 * `tokenizer.chat_template.<name>`) through `@huggingface/jinja`, falling back to ChatML when the file has none. The
 * result carries the template's identity (SHA-256 of its text) and the stop strings / end-of-generation ids to use.
 * Template errors and the template's own `raise_exception` become `LlmError('template')`.
 */

import { Environment, Interpreter, Template } from '@huggingface/jinja';
import { LlmError } from '../errors.js';
import type { GgufValue } from '../gguf/types.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { type ChatMessage, validateMessages } from './messages.js';
import { sha256Hex } from '../io/sha256.js';
import { strftime } from './strftime.js';

/** ChatML, used when a model has no template (`<|im_start|>role\ncontent<|im_end|>\n`). */
export const CHATML_TEMPLATE =
  "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}" +
  "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

/** Turn-end markers that become stop strings when the template writes them. */
const TURN_END_MARKERS = [
  '<|im_end|>', '<|eot_id|>', '<|eom_id|>', '<end_of_turn>', '<|end|>', '<|endoftext|>', '<|end_of_text|>',
  '<｜end▁of▁sentence｜>', '<turn|>', '</s>',
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
  /** Override the BOS / EOS strings (default: the tokenizer's token texts, else ''). */
  readonly bosToken?: string;
  readonly eosToken?: string;
  /** Extra template variables (e.g. `date_string`, `enable_thinking`). They cannot replace the built-in ones. */
  readonly variables?: Readonly<Record<string, unknown>>;
  /** Clock for `strftime_now` (default: now). */
  readonly now?: Date;
}

/** A rendered conversation. */
export interface RenderedChat {
  /** The prompt text, special markers included as text. */
  readonly prompt: string;
  /** SHA-256 (hex) of the template text: the template's identity, e.g. for prompt caches. */
  readonly templateHash: string;
  readonly templateSource: TemplateSource;
  /** Strings that end the assistant's turn. */
  readonly stopStrings: readonly string[];
  /** End-of-generation token ids (when a tokenizer was given). */
  readonly eogTokenIds?: readonly number[];
}

/** Thrown by the template's `raise_exception`; turned into `LlmError('template')`. */
class TemplateRaise extends Error {}

const compiled = new Map<string, Template>();

/**
 * Python string literals allow a backslash-newline line continuation (Mistral's templates use it); @huggingface/jinja
 * 0.5 rejects it. Inside `{{ }}` / `{% %}` tags it is removed, as Python would; template text outside tags is untouched.
 */
function normalizeContinuations(text: string): string {
  if (!text.includes('\\\n')) return text;
  return text.replace(/\{[{%][\s\S]*?[%}]\}/g, (tag) => tag.replaceAll('\\\n', ''));
}

function compile(text: string): Template {
  let t = compiled.get(text);
  if (!t) {
    try {
      t = new Template(normalizeContinuations(text));
    } catch (e) {
      throw new LlmError('template', `parsing the chat template failed: ${(e as Error).message}; pass a valid Jinja template`, {
        cause: e,
      });
    }
    if (compiled.size >= 16) compiled.clear();
    compiled.set(text, t);
  }
  return t;
}

/** Picks the template text: explicit, named, the model's, or ChatML. */
export function selectTemplate(options: RenderChatOptions): { text: string; source: TemplateSource } {
  if (options.template !== undefined) {
    if (typeof options.template !== 'string') throw new LlmError('template', 'chat template must be a string');
    return { text: options.template, source: 'explicit' };
  }
  const meta = options.metadata;
  const read = (key: string): string | undefined => {
    const v = meta && Object.prototype.hasOwnProperty.call(meta, key) ? meta[key] : undefined;
    return typeof v === 'string' ? v : undefined;
  };
  if (options.templateName !== undefined) {
    const text = read(`tokenizer.chat_template.${options.templateName}`);
    if (text === undefined) {
      throw new LlmError('template', `the model has no chat template named '${options.templateName}' (tokenizer.chat_template.${options.templateName})`, {
        details: { name: options.templateName },
      });
    }
    return { text, source: 'named' };
  }
  const text = read('tokenizer.chat_template');
  return text !== undefined ? { text, source: 'metadata' } : { text: CHATML_TEMPLATE, source: 'chatml-fallback' };
}

function pyRange(start: number, stop?: number, step = 1): number[] {
  if (stop === undefined) [start, stop] = [0, start];
  if (step === 0) throw new Error('range() step must not be zero');
  const out: number[] = [];
  for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
  return out;
}

/**
 * Renders `messages` with the model's chat template. Validates the conversation first (`LlmError('invalid-request')`);
 * template failures and `raise_exception` are `LlmError('template')`.
 */
export function renderChat(messages: readonly ChatMessage[], options: RenderChatOptions = {}): RenderedChat {
  const valid = validateMessages(messages);
  const { text, source } = selectTemplate(options);
  const template = compile(text);
  const tok = options.tokenizer;
  const tokenString = (id: number | null | undefined): string => (tok && id !== null && id !== undefined ? tok.tokenText(id) : '');
  const bos = options.bosToken ?? tokenString(tok?.bosId);
  const eos = options.eosToken ?? tokenString(tok?.eosId);
  const now = options.now ?? new Date();

  const env = new Environment();
  const builtins: Record<string, unknown> = {
    false: false,
    true: true,
    none: null,
    False: false,
    True: true,
    None: null,
    range: pyRange,
    raise_exception: (message: unknown) => {
      throw new TemplateRaise(String(message));
    },
    strftime_now: (format: unknown) => strftime(now, String(format)),
    messages: valid.map((m) => ({ ...m })),
    add_generation_prompt: options.addGenerationPrompt ?? true,
    bos_token: bos,
    eos_token: eos,
  };
  if (options.tools !== undefined) builtins.tools = options.tools;
  for (const [k, v] of Object.entries(options.variables ?? {})) if (!(k in builtins)) builtins[k] = v;
  let prompt: string;
  try {
    for (const [k, v] of Object.entries(builtins)) env.set(k, v);
    prompt = String(new Interpreter(env).run(template.parsed).value);
  } catch (e) {
    if (e instanceof TemplateRaise) {
      throw new LlmError('template', `the chat template refused the conversation: ${e.message}`, { cause: e });
    }
    throw new LlmError('template', `rendering the chat template failed: ${(e as Error).message}`, { cause: e });
  }

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
    ...(eog ? { eogTokenIds: eog } : {}),
  };
}
