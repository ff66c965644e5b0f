import { describe, expect, it } from 'vitest';
import { TokenAttr, Vocab } from '../../../src/tokenizer/vocab.js';

/** An SPM vocabulary with repeated texts: llama.cpp's by-text fixes apply to the FIRST id of a text only. */
function vocab(): Vocab {
  const tokens = ['<unk>', '<s>', '</s>', '<unused0>', 'x', '<unused0>', '<|im_end|>', '<|im_end|>', '', '<|end|>'];
  const types = [2, 3, 3, 3, 1, 3, 1, 1, 1, 1];
  return new Vocab({
    'tokenizer.ggml.model': 'llama',
    'tokenizer.ggml.tokens': tokens,
    'tokenizer.ggml.token_type': Int32Array.from(types),
    'tokenizer.ggml.scores': new Float32Array(tokens.length),
  });
}

describe('Vocab by-text lookups (found without the text → id map)', () => {
  it('marks only the first control token of an "unused" text UNUSED', () => {
    const v = vocab();
    expect(v.attrs[3]).toBe(TokenAttr.Control | TokenAttr.Unused);
    expect(v.attrs[5]).toBe(TokenAttr.Control);
  });

  it('makes the first id of an end-of-generation text control and end-of-generation, not its repeats', () => {
    const v = vocab();
    expect(v.eogIds.has(6)).toBe(true);
    expect(v.attrs[6] & TokenAttr.Control).toBeTruthy();
    expect(v.eogIds.has(7)).toBe(false);
    expect(v.attrs[7]).toBe(TokenAttr.Normal);
    expect(v.eotId).toBe(6); // '<|eot_id|>' absent: '<|im_end|>' comes before '<|end|>' in llama.cpp's list
    expect([...v.eogIds].sort((a, b) => a - b)).toEqual([2, 6, 9]);
  });

  it('looks texts up by their first id, empty texts by their placeholder', () => {
    const v = vocab();
    expect(v.id('<unused0>')).toBe(3);
    expect(v.id('<|im_end|>')).toBe(6);
    expect(v.id('[EMPTY_8]')).toBe(8);
    expect(v.id('y')).toBeUndefined();
    expect(v.tokens[8]).toBe('[EMPTY_8]');
  });
});
