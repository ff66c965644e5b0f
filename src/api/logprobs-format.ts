/**
 * Shapes the engine's per-token log-probabilities (`engine/generate-logprobs.ts`) as OpenAI's chat
 * (`logprobs.content[]`) and legacy text-completion (`tokens` / `token_logprobs` / `top_logprobs` / `text_offset`)
 * objects. A token's text is its bytes decoded as UTF-8 (a piece that splits a character shows U+FFFD; `bytes`
 * keeps the exact bytes).
 */

import type { PositionLogprobs } from '../engine/generate-logprobs.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import type { ChatLogprobs, ChatTopLogprob, CompletionLogprobs } from './types.js';

const utf8 = new TextDecoder('utf-8', { fatal: false });

function piece(tk: Pick<Tokenizer, 'tokenBytes'>, id: number): ChatTopLogprob & { text: string } {
  const bytes = tk.tokenBytes(id, { renderSpecial: true });
  const text = utf8.decode(bytes);
  return { token: text, text, logprob: 0, bytes: Array.from(bytes) };
}

/** Chat `logprobs` of `positions`. */
export function chatLogprobs(tk: Pick<Tokenizer, 'tokenBytes'>, positions: readonly PositionLogprobs[]): ChatLogprobs {
  return {
    content: positions.map((p) => {
      const t = piece(tk, p.id);
      return {
        token: t.token,
        logprob: p.logprob,
        bytes: t.bytes,
        top_logprobs: p.top.map((a) => {
          const x = piece(tk, a.id);
          return { token: x.token, logprob: a.logprob, bytes: x.bytes };
        }),
      };
    }),
  };
}

/** Text-completion `logprobs` of `positions`, offsets counted from `startOffset` (the echoed prompt's length). */
export function completionLogprobs(
  tk: Pick<Tokenizer, 'tokenBytes'>,
  positions: readonly PositionLogprobs[],
  startOffset = 0,
): CompletionLogprobs {
  const out: CompletionLogprobs = { tokens: [], token_logprobs: [], top_logprobs: [], text_offset: [] };
  let offset = startOffset;
  for (const p of positions) {
    const t = piece(tk, p.id).text;
    out.tokens.push(t);
    out.token_logprobs.push(p.logprob);
    const top: Record<string, number> = {};
    for (const a of p.top) {
      const k = piece(tk, a.id).text;
      if (!(k in top)) top[k] = a.logprob;
    }
    out.top_logprobs.push(top);
    out.text_offset.push(offset);
    offset += t.length;
  }
  return out;
}
