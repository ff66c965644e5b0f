/**
 * Prompt assembly: turns, trimming to a token budget by whole turns (system kept, never half a turn), BOS handling
 * and the context-overflow error.
 */

import { describe, expect, it } from 'vitest';
import { buildPrompt, splitTurns, trimHistory, type ChatMessage } from '../../../src/chat/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { loadMetadata, loadTokenizer } from '../tokenizer/vocab-fixtures.js';

const SYS: ChatMessage = { role: 'system', content: 'You are terse.' };
const convo = (turns: number): ChatMessage[] => {
  const out: ChatMessage[] = [SYS];
  for (let i = 0; i < turns; i++) {
    out.push({ role: 'user', content: `question number ${i}` }, { role: 'assistant', content: `answer number ${i}` });
  }
  out.push({ role: 'user', content: 'last question' });
  return out;
};

describe('splitTurns / trimHistory', () => {
  it('groups messages into turns that start at user messages', () => {
    const { system, turns } = splitTurns(convo(2));
    expect(system).toEqual([SYS]);
    expect(turns.map((t) => t.map((m) => m.role).join(','))).toEqual(['user,assistant', 'user,assistant', 'user']);
  });

  it('drops the oldest whole turns and keeps the system message', () => {
    const msgs = convo(5);
    const count = (m: readonly ChatMessage[]): number => m.reduce((n, x) => n + (x.content ?? '').length, 0);
    const kept = trimHistory(msgs, count(msgs) - 1, count);
    expect(kept[0]).toBe(SYS);
    expect(kept[1].role).toBe('user');
    expect(kept.length).toBe(msgs.length - 2);
    expect(trimHistory(msgs, count(msgs), count)).toBe(msgs);
    const minimal = trimHistory(msgs, count([SYS, msgs[msgs.length - 1]]), count);
    expect(minimal).toEqual([SYS, msgs[msgs.length - 1]]);
  });

  it('throws context-overflow when even the last turn does not fit', () => {
    const count = (m: readonly ChatMessage[]): number => m.length * 100;
    expect(thrownLlmError(() => trimHistory(convo(3), 150, count)).code).toBe('context-overflow');
  });
});

describe('buildPrompt', () => {
  it('tokenizes with special tokens, adds BOS, trims to the budget', async () => {
    const path = sharedPath('models', 'arch', 'gemma2-f16.gguf');
    const [metadata, tokenizer] = await Promise.all([loadMetadata(path), loadTokenizer(path)]);
    const msgs = convo(6).slice(1); // gemma's template refuses a system role
    const full = buildPrompt(msgs, { metadata, tokenizer });
    expect(full.droppedMessages).toBe(0);
    expect(full.tokens[0]).toBe(tokenizer.bosId);
    expect(full.tokens.filter((t) => t === tokenizer.bosId).length).toBe(1); // the template writes <s>; not doubled
    expect(full.tokens).toContain(tokenizer.tokenId('<start_of_turn>'));
    const budget = full.tokens.length - 5;
    const trimmed = buildPrompt(msgs, { metadata, tokenizer, maxPromptTokens: budget });
    expect(trimmed.tokens.length).toBeLessThanOrEqual(budget);
    expect(trimmed.droppedMessages).toBe(2);
    expect(trimmed.messages[0].content).toBe('question number 1');
    // the reported prompt is the tokenised text: the vocabulary adds BOS, so the template's BOS text is not in it
    expect(trimmed.prompt.startsWith('<start_of_turn>user\nquestion number 1')).toBe(true);
  });

  it('rejects a bad budget', async () => {
    const tokenizer = await loadTokenizer(sharedPath('models', 'stories260K.gguf'));
    expect(() => buildPrompt(convo(1), { tokenizer, maxPromptTokens: 0 })).toThrow(/positive integer/);
  });
});
