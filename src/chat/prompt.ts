/**
 * Prompt assembly: messages → rendered text (the model's template) → token ids (special markers parsed as single
 * tokens, BOS added when the vocabulary wants one and the template did not write it), with the history trimmed to a
 * token budget by whole turns: leading system messages and the latest turn are always kept, older turns are dropped
 * oldest first, never half a turn.
 */

import { LlmError } from '../errors.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { type ChatMessage, validateMessages } from './messages.js';
import { type RenderChatOptions, type RenderedChat, renderChat } from './template.js';

/** Options of `buildPrompt`. */
export interface BuildPromptOptions extends RenderChatOptions {
  /** The model's tokenizer (required: the prompt is returned as ids). */
  readonly tokenizer: Tokenizer;
  /** Most prompt tokens; older turns are dropped to fit. Default: no limit. */
  readonly maxPromptTokens?: number;
  /** Put BOS first when the template did not (default: the vocabulary's `add_bos`). */
  readonly addBos?: boolean;
}

/** A prompt ready for the model. */
export interface BuiltPrompt extends RenderedChat {
  /** Prompt token ids. */
  readonly tokens: readonly number[];
  /** The messages that were rendered (after trimming). */
  readonly messages: readonly ChatMessage[];
  /** How many messages trimming dropped. */
  readonly droppedMessages: number;
}

/** Turns of a conversation: leading system messages, then groups that each start at a user message. */
export function splitTurns(messages: readonly ChatMessage[]): { system: ChatMessage[]; turns: ChatMessage[][] } {
  let i = 0;
  const system: ChatMessage[] = [];
  while (i < messages.length && messages[i].role === 'system') system.push(messages[i++]);
  const turns: ChatMessage[][] = [];
  for (; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'user' || turns.length === 0) turns.push([m]);
    else turns[turns.length - 1].push(m);
  }
  return { system, turns };
}

/**
 * Drops the oldest whole turns until `countTokens(messages) <= budget`. Keeps the leading system messages and the
 * last turn; when even that does not fit, throws `LlmError('context-overflow')`. `countTokens` is called
 * O(log turns) times (binary search: fewer turns never need more tokens).
 */
export function trimHistory(
  messages: readonly ChatMessage[],
  budget: number,
  countTokens: (messages: readonly ChatMessage[]) => number,
): readonly ChatMessage[] {
  if (!Number.isFinite(budget)) return messages;
  const { system, turns } = splitTurns(messages);
  const keep = (drop: number): ChatMessage[] => [...system, ...turns.slice(drop).flat()];
  if (countTokens(messages) <= budget) return messages;
  const maxDrop = Math.max(0, turns.length - 1);
  let lo = 1;
  let hi = maxDrop;
  if (maxDrop === 0 || countTokens(keep(maxDrop)) > budget) {
    const needed = countTokens(keep(maxDrop));
    throw new LlmError(
      'context-overflow',
      `building the prompt: the system message and the last turn need ${needed} tokens but the budget is ${budget}; shorten them or raise the context size`,
      { details: { needed, budget } },
    );
  }
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (countTokens(keep(mid)) <= budget) hi = mid;
    else lo = mid + 1;
  }
  return keep(lo);
}

/** Renders and tokenizes one set of messages. */
function assemble(
  messages: readonly ChatMessage[],
  options: BuildPromptOptions,
): { rendered: RenderedChat; tokens: number[] } {
  const rendered = renderChat(messages, options);
  const tok = options.tokenizer;
  const tokens = tok.encode(rendered.prompt, { parseSpecial: true, addSpecial: false });
  const addBos = options.addBos ?? tok.addBos;
  if (addBos && tok.bosId !== null && tokens[0] !== tok.bosId) tokens.unshift(tok.bosId);
  return { rendered, tokens };
}

/**
 * Messages → prompt text → token ids, trimmed to `maxPromptTokens` by whole turns.
 *
 * @example
 * const p = buildPrompt([{ role: 'user', content: 'Hi' }], { tokenizer, metadata, maxPromptTokens: 4000 });
 * p.tokens; // ids to evaluate; p.stopStrings / p.eogTokenIds end the reply
 */
export function buildPrompt(messages: readonly ChatMessage[], options: BuildPromptOptions): BuiltPrompt {
  const valid = validateMessages(messages);
  const budget = options.maxPromptTokens ?? Infinity;
  if (budget !== Infinity && (!Number.isInteger(budget) || budget <= 0)) {
    throw new LlmError(
      'invalid-request',
      `building the prompt: maxPromptTokens must be a positive integer, got ${budget}`,
    );
  }
  type Assembled = { rendered: RenderedChat; tokens: number[]; messages: readonly ChatMessage[] };
  const memo: { last?: Assembled } = {};
  const count = (msgs: readonly ChatMessage[]): number => {
    memo.last = { ...assemble(msgs, options), messages: msgs };
    return memo.last.tokens.length;
  };
  const kept = trimHistory(valid, budget, count);
  const final = memo.last?.messages === kept ? memo.last : { ...assemble(kept, options), messages: kept };
  return {
    ...final.rendered,
    tokens: final.tokens,
    messages: kept,
    droppedMessages: valid.length - kept.length,
  };
}
