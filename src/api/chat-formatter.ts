/**
 * How the engine turns a conversation into prompt tokens: the `ChatFormatter` seam between the API and the chat
 * template module, plus history truncation by whole turns. The engine only needs the rendered text, the template's
 * identity (for the prompt-cache key) and the stop strings / end tokens the template implies.
 */

import type { ChatMessage } from './types.js';

/** A conversation rendered for generation. */
export interface RenderedChat {
  /** Prompt text, ending with the assistant's generation prompt. */
  readonly text: string;
  /** Stop strings the template implies (e.g. a turn marker that is not a single token). */
  readonly stop: readonly string[];
  /** Extra end-of-generation token ids the template implies. */
  readonly eogIds: readonly number[];
}

/** Renders conversations with one chat template. */
export interface ChatFormatter {
  /** Hash of the template text (part of the prompt-cache key). */
  readonly templateHash: string;
  /** Renders `messages` with the generation prompt appended. */
  render(messages: readonly ChatMessage[]): RenderedChat;
}

/** The ChatML layout (`<|im_start|>role\ncontent<|im_end|>\n`), used when a model has no template. */
export function createChatMlFormatter(): ChatFormatter {
  return {
    templateHash: 'chatml',
    render(messages) {
      let text = '';
      for (const m of messages) text += `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`;
      return { text: text + '<|im_start|>assistant\n', stop: ['<|im_end|>'], eogIds: [] };
    },
  };
}

/**
 * Drops the oldest whole turns (a user message with the replies that follow it) until `fits` accepts the
 * conversation; a leading system message and the last turn are always kept. Returns null when even the shortest
 * conversation does not fit.
 */
export function trimHistory(messages: readonly ChatMessage[], fits: (m: readonly ChatMessage[]) => boolean): ChatMessage[] | null {
  const system = messages.length > 0 && messages[0].role === 'system' ? [messages[0]] : [];
  let rest = messages.slice(system.length);
  for (;;) {
    const candidate = [...system, ...rest];
    if (fits(candidate)) return candidate;
    // Start of the second turn: the next user message after the first message.
    let next = 1;
    while (next < rest.length && rest[next].role !== 'user') next++;
    if (next >= rest.length) return null;
    rest = rest.slice(next);
  }
}
