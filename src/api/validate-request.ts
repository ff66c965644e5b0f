/**
 * Checks a request's fields and turns them into engine settings: the sampling fields through
 * `engine/sampling-options.ts`, plus messages, prompt, stream, n and truncate here. Every problem is an
 * `LlmError('invalid-request')` whose message and `details.field` name the field, the value and what is allowed.
 *
 * No field is silently ignored: a field the engine does not implement (`tools`, `response_format: json_object`,
 * `n: 2`, a misspelt `max_token`…) is refused by name. A few fields OpenAI clients send with their
 * default value are accepted as no-ops when they have that value, because with it they ask for nothing the engine
 * does not do — see `NO_OP_FIELDS`. A field whose value is `undefined` counts as absent (as in JSON).
 */

import { LlmError } from '../errors.js';
import { invalidField, normalizeSamplingOptions, type NormalizedSampling } from '../engine/sampling-options.js';
import { toolSpecOf, type ToolSpec } from '../tools/tool-spec.js';
import { grammarSpecOf, type GrammarSpec } from '../structured/grammar-spec.js';
import type { ChatCompletionRequest, ChatMessage, CompletionRequest, SamplingRequest } from './types.js';

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

/** Fields both endpoints implement. */
const SHARED_FIELDS = [
  'temperature',
  'top_p',
  'top_k',
  'min_p',
  'max_tokens',
  'max_completion_tokens',
  'stop',
  'seed',
  'logit_bias',
  'frequency_penalty',
  'presence_penalty',
  'repetition_penalty',
  'repeat_last_n',
  'n',
  'signal',
  'stream',
  'model',
  'response_format',
  'grammar',
];
const CHAT_FIELDS = new Set([
  ...SHARED_FIELDS,
  'messages',
  'truncate',
  'chat_template_kwargs',
  'logprobs',
  'top_logprobs',
  'reasoning_effort',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
]);

/** Values `reasoning_effort` takes. */
const REASONING_EFFORTS = ['none', 'minimal', 'low', 'medium', 'high'];
const COMPLETION_FIELDS = new Set([...SHARED_FIELDS, 'prompt', 'echo', 'logprobs']);

/** Most alternatives per position `top_logprobs` (chat) / `logprobs` (completions) may ask for. */
const MAX_TOP_LOGPROBS = 20;

/**
 * Fields accepted without effect, each only with the value(s) that ask for nothing more than the engine does:
 * - `user`: an end-user id for the provider's abuse monitoring; nothing to do locally;
 * - `stream_options: { include_usage }`: the last streamed chunk always carries `usage`;
 * - `store: false | null`: nothing is stored anyway;
 * - completions only: `best_of: 1 | null`, `suffix: null`, `top_logprobs: null` (completions use `logprobs: N`).
 */
const NO_OP_FIELDS: Readonly<Record<string, { readonly allowed: string; readonly ok: (v: unknown) => boolean }>> = {
  user: { allowed: 'a string (it has no effect locally)', ok: (v) => typeof v === 'string' },
  stream_options: {
    allowed: 'null or { include_usage: boolean } (the last chunk always carries usage)',
    ok: (v) =>
      v === null ||
      (typeof v === 'object' &&
        !Array.isArray(v) &&
        Object.entries(v as object).every(
          ([k, x]) => k === 'include_usage' && (typeof x === 'boolean' || x === undefined),
        )),
  },
  functions: { allowed: 'absent or null: function calling is not implemented', ok: (v) => v === null },
  function_call: {
    allowed: "'none' or null: function calling is not implemented",
    ok: (v) => v === 'none' || v === null,
  },
  store: { allowed: 'false or null: nothing is stored', ok: (v) => v === false || v === null },
};
const COMPLETION_NO_OP_FIELDS: Readonly<
  Record<string, { readonly allowed: string; readonly ok: (v: unknown) => boolean }>
> = {
  ...NO_OP_FIELDS,
  tools: { allowed: 'absent or null: tools are a chat feature', ok: (v) => v === null },
  tool_choice: { allowed: "'none' or null: tools are a chat feature", ok: (v) => v === 'none' || v === null },
  parallel_tool_calls: {
    allowed: 'a boolean (no effect without tools)',
    ok: (v) => typeof v === 'boolean' || v === null,
  },
  best_of: { allowed: '1 or null: one candidate per request', ok: (v) => v === 1 || v === null },
  suffix: { allowed: 'null: insertion (suffix) is not implemented', ok: (v) => v === null },
  top_logprobs: { allowed: 'null (completions take the number of alternatives in logprobs)', ok: (v) => v === null },
};

/** Settings of a request after validation. */
export interface NormalizedRequest extends NormalizedSampling {
  readonly stream: boolean;
  /** Choices to generate (1…8): one prefill, decoded together; choice i draws with seed + i. */
  readonly n: number;
  /** Alternatives per position when log-probabilities are asked for; undefined = none. */
  readonly logprobs?: number;
  /** The output constraint (`response_format` JSON modes or `grammar`), if any. */
  readonly grammar?: GrammarSpec;
  /** The request field the constraint came from (for error messages). */
  readonly grammarField?: string;
}

/** Most choices one request may ask for (`n`). */
const MAX_CHOICES = 8;

function topCount(field: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_TOP_LOGPROBS)
    invalidField(field, v, `an integer 0…${MAX_TOP_LOGPROBS}`);
  return v;
}

/** Chat: `logprobs: boolean | null`, `top_logprobs: 0…20 | null` (only with `logprobs: true`). */
function chatLogprobs(req: { logprobs?: unknown; top_logprobs?: unknown }): number | undefined {
  const { logprobs, top_logprobs: top } = req;
  if (logprobs !== undefined && logprobs !== null && typeof logprobs !== 'boolean')
    invalidField('logprobs', logprobs, 'a boolean');
  if (top !== undefined && top !== null) {
    const n = topCount('top_logprobs', top);
    if (logprobs !== true) invalidField('top_logprobs', top, 'given only with logprobs: true');
    return n;
  }
  return logprobs === true ? 0 : undefined;
}

/** Completions: `logprobs: 0…20 | null` (alternatives per position); `false` counts as absent. */
function completionLogprobs(v: unknown): number | undefined {
  if (v === undefined || v === null || v === false) return undefined;
  return topCount('logprobs', v);
}

/** Refuses every field of `req` that is neither implemented (`known`) nor an accepted no-op with its default value. */
function checkFields(req: object, known: ReadonlySet<string>, noOps: typeof NO_OP_FIELDS, endpoint: string): void {
  for (const [field, value] of Object.entries(req)) {
    if (value === undefined || known.has(field)) continue;
    const noOp = noOps[field];
    if (noOp !== undefined) {
      if (!noOp.ok(value)) invalidField(field, value, noOp.allowed);
      continue;
    }
    throw new LlmError(
      'invalid-request',
      `request field '${field}' is not supported by ${endpoint}; remove it ` +
        `(supported: ${[...known].filter((f) => f !== 'signal').join(', ')})`,
      { details: { field } },
    );
  }
}

/** Validates the sampling and stopping fields shared by both endpoints. */
function normalizeSampling(
  req: SamplingRequest & { stream?: unknown; max_completion_tokens?: unknown },
  vocabSize: number,
): NormalizedRequest {
  if (req === null || typeof req !== 'object') invalidField('request', req, 'an object');
  const n = req.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_CHOICES)
    invalidField('n', req.n, `an integer 1…${MAX_CHOICES} (choices per request)`);
  if (req.stream !== undefined && req.stream !== null && typeof req.stream !== 'boolean')
    invalidField('stream', req.stream, 'a boolean');
  if (req.signal !== undefined && !(typeof req.signal === 'object' && req.signal !== null && 'aborted' in req.signal))
    invalidField('signal', req.signal, 'an AbortSignal');
  // `max_completion_tokens` is OpenAI's newer name for `max_tokens`; both may be given only with the same value.
  const r = req as { response_format?: unknown; grammar?: unknown };
  const spec = grammarSpecOf(r.response_format, r.grammar);
  const g = spec ? { grammar: spec, grammarField: spec.kind === 'grammar' ? 'grammar' : 'response_format' } : {};
  const mct = req.max_completion_tokens;
  if (mct === undefined || mct === null)
    return { ...normalizeSamplingOptions(req, vocabSize), stream: req.stream === true, n, ...g };
  if (req.max_tokens !== undefined && req.max_tokens !== null && req.max_tokens !== mct) {
    invalidField('max_completion_tokens', mct, `equal to max_tokens (${String(req.max_tokens)}) when both are given`);
  }
  try {
    return {
      ...normalizeSamplingOptions({ ...req, max_tokens: mct as number }, vocabSize),
      stream: req.stream === true,
      n,
      ...g,
    };
  } catch (e) {
    if (e instanceof LlmError && e.details?.field === 'max_tokens')
      invalidField('max_completion_tokens', mct, String(e.details.allowed));
    throw e;
  }
}

/** Checks one message's shape (the conversation's structure is checked when the template renders it). */
function checkMessage(m: ChatMessage, i: number): ChatMessage {
  if (m === null || typeof m !== 'object' || Array.isArray(m))
    invalidField(`messages[${i}]`, m, 'an object { role, content }');
  if (!ROLES.has(m.role))
    invalidField(`messages[${i}].role`, m.role, "one of 'system', 'developer', 'user', 'assistant', 'tool'");
  const calls = m.tool_calls;
  if (calls !== undefined && calls !== null) {
    if (m.role !== 'assistant' || !Array.isArray(calls))
      invalidField(`messages[${i}].tool_calls`, calls, 'an array, on assistant messages only');
    calls.forEach((c, k) => {
      const ok =
        c !== null &&
        typeof c === 'object' &&
        typeof c.id === 'string' &&
        (c.type === 'function' || c.type === undefined) &&
        c.function !== null &&
        typeof c.function === 'object' &&
        typeof c.function.name === 'string' &&
        c.function.name !== '' &&
        typeof c.function.arguments === 'string';
      if (!ok)
        invalidField(
          `messages[${i}].tool_calls[${k}]`,
          c,
          "{ id: string, type: 'function', function: { name: string, arguments: JSON text } }",
        );
    });
  }
  const c = m.content as unknown;
  const hasCalls = Array.isArray(calls) && calls.length > 0;
  if (Array.isArray(c)) {
    c.forEach((part: unknown, k) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      if (p === null || typeof p !== 'object' || p.type !== 'text' || typeof p.text !== 'string') {
        invalidField(
          `messages[${i}].content[${k}]`,
          part,
          "{ type: 'text', text: string } or { type: 'image_url', image_url: { url } } (other part types are not supported)",
        );
      }
    });
  } else if (typeof c !== 'string' && !(hasCalls && (c === null || c === undefined))) {
    invalidField(
      `messages[${i}].content`,
      c,
      'a string or text parts (null only on an assistant message with tool_calls)',
    );
  }
  if (m.tool_call_id !== undefined && m.tool_call_id !== null && typeof m.tool_call_id !== 'string')
    invalidField(`messages[${i}].tool_call_id`, m.tool_call_id, 'a string');
  if (m.reasoning_content !== undefined && m.reasoning_content !== null && typeof m.reasoning_content !== 'string') {
    invalidField(`messages[${i}].reasoning_content`, m.reasoning_content, 'a string');
  }
  if (m.name !== undefined && typeof m.name !== 'string') invalidField(`messages[${i}].name`, m.name, 'a string');
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(m)) if (v !== undefined && v !== null) out[k] = v;
  if (m.content === null || m.content === undefined) out.content = null;
  return out as unknown as ChatMessage;
}

/** Validates a chat request's messages and options. */
export function normalizeChatRequest(
  req: ChatCompletionRequest,
  vocabSize: number,
): NormalizedRequest & { truncate: 'none' | 'history'; messages: ChatMessage[]; tools?: ToolSpec } {
  const base = normalizeSampling(req, vocabSize);
  checkFields(req, CHAT_FIELDS, NO_OP_FIELDS, 'chat.completions.create');
  if (!Array.isArray(req.messages) || req.messages.length === 0)
    invalidField('messages', req.messages, 'a non-empty array of { role, content }');
  const messages: ChatMessage[] = req.messages.map((m, i) => checkMessage(m, i));
  const effort = req.reasoning_effort;
  if (effort !== undefined && effort !== null && !REASONING_EFFORTS.includes(effort))
    invalidField('reasoning_effort', effort, `one of ${REASONING_EFFORTS.join(', ')}`);
  const truncate = req.truncate ?? 'none';
  if (truncate !== 'none' && truncate !== 'history') invalidField('truncate', truncate, "'none' or 'history'");
  const logprobs = chatLogprobs(req);
  const tools = toolSpecOf(req.tools, req.tool_choice, req.parallel_tool_calls);
  if (tools && base.grammar)
    invalidField(
      'tools',
      '(tools)',
      'given without response_format JSON modes or grammar (one constraint per request)',
    );
  return { ...base, truncate, messages, ...(logprobs !== undefined ? { logprobs } : {}), ...(tools ? { tools } : {}) };
}

/** Validates a text completion request. */
export function normalizeCompletionRequest(
  req: CompletionRequest,
  vocabSize: number,
): NormalizedRequest & { echo: boolean } {
  const base = normalizeSampling(req, vocabSize);
  checkFields(req, COMPLETION_FIELDS, COMPLETION_NO_OP_FIELDS, 'completions.create');
  const p = req.prompt;
  if (typeof p === 'string') {
    if (p.length === 0) invalidField('prompt', p, 'a non-empty string or array of token ids');
  } else if (!Array.isArray(p) || p.length === 0 || p.some((t) => !Number.isInteger(t) || t < 0 || t >= vocabSize)) {
    invalidField('prompt', p, `a non-empty string or array of token ids in 0…${vocabSize - 1}`);
  }
  if (req.echo !== undefined && typeof req.echo !== 'boolean') invalidField('echo', req.echo, 'a boolean');
  const logprobs = completionLogprobs(req.logprobs);
  return { ...base, echo: req.echo === true, ...(logprobs !== undefined ? { logprobs } : {}) };
}
