/**
 * The real templates carried by ../shared/models/arch/*.gguf (Llama 3.1, Qwen ChatML, Qwen3, Gemma 2, Phi-3) against
 * their reference `chat_example`: the prompt must equal @huggingface/jinja 0.5.11's `rendered`, its tokens (special
 * parsing on, no BOS added) must equal llama.cpp's `tokens_parse_special`, and detokenizing must give the text back.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildPrompt, renderChat, type ChatMessage } from '../../../src/chat/index.js';
import { listGgufFiles } from '../../helpers/shared-path.js';
import { loadMetadata, loadTokenizer } from '../tokenizer/vocab-fixtures.js';

interface ChatExample {
  context: {
    messages: ChatMessage[];
    add_generation_prompt: boolean;
    bos_token: string;
    eos_token: string;
    date_string: string;
  };
  rendered: string;
  tokens_parse_special: number[];
}

const FILES = listGgufFiles('models/arch');

describe('arch fixtures: chat_example', () => {
  it('has fixtures', () => expect(FILES.length).toBeGreaterThanOrEqual(6));
  for (const gguf of FILES) {
    const name = gguf.split('/').pop()!;
    it(name, async () => {
      const ref = JSON.parse(readFileSync(gguf.replace(/\.gguf$/, '.reference.json'), 'utf8')) as {
        chat_example: ChatExample;
      };
      const ex = ref.chat_example;
      const [metadata, tokenizer] = await Promise.all([loadMetadata(gguf), loadTokenizer(gguf)]);
      expect(tokenizer.tokenText(tokenizer.bosId!)).toBe(ex.context.bos_token);
      expect(tokenizer.tokenText(tokenizer.eosId!)).toBe(ex.context.eos_token);

      const r = renderChat(ex.context.messages, {
        metadata,
        tokenizer,
        addGenerationPrompt: ex.context.add_generation_prompt,
        variables: { date_string: ex.context.date_string },
        stripBos: false,
      });
      expect(r.templateSource).toBe('metadata');
      expect(r.prompt).toBe(ex.rendered);
      // by default the prompt is what is tokenised: a leading BOS text goes when the vocabulary adds BOS itself
      const reported = renderChat(ex.context.messages, {
        metadata,
        tokenizer,
        addGenerationPrompt: ex.context.add_generation_prompt,
        variables: { date_string: ex.context.date_string },
      });
      const bosText = tokenizer.tokenText(tokenizer.bosId!);
      expect(reported.prompt).toBe(
        tokenizer.addBos && ex.rendered.startsWith(bosText) ? ex.rendered.slice(bosText.length) : ex.rendered,
      );
      expect(r.templateHash).toMatch(/^[0-9a-f]{64}$/);
      expect(r.eogTokenIds!.length).toBeGreaterThan(0);

      const ids = tokenizer.encode(r.prompt, { parseSpecial: true });
      expect(ids).toEqual(ex.tokens_parse_special);

      // Round trip. phi-3 is the one llama.cpp itself does not round-trip: its special tokens carry RSTRIP (the
      // newline after them is eaten) and SPM's add_space_prefix puts '▁' before the text that follows a special token.
      const back = tokenizer.decode(ids, { renderSpecial: true });
      if (name.startsWith('phi3')) {
        expect(back).toBe(
          ex.rendered
            .replace(/(<\|(?:user|assistant)\|>)\n(?=[^])/g, '$1 ')
            .replace(/(<\|(?:end|assistant)\|>)\n/g, '$1'),
        );
      } else {
        expect(back).toBe(ex.rendered);
      }

      // Prompt assembly gives the same ids (BOS already written by the template where the family wants it).
      const p = buildPrompt(ex.context.messages, {
        metadata,
        tokenizer,
        variables: { date_string: ex.context.date_string },
      });
      const expected =
        tokenizer.addBos && ex.tokens_parse_special[0] !== tokenizer.bosId
          ? [tokenizer.bosId, ...ex.tokens_parse_special]
          : ex.tokens_parse_special;
      expect(p.tokens).toEqual(expected);
    });
  }
});
