/** The speed shown after an answer: its own tokens over its own time, never a lifetime average; none without data. */
import { describe, expect, it } from 'vitest';
import { speedText } from '../../../demo/ui/status-text';
import { CHATML_FALLBACK_TEMPLATE, quantFromFileName } from '../../../demo/ui/model-info';
import { CHATML_TEMPLATE } from '../../../src/chat/template';

describe('speedText', () => {
  it('counts the tokens after the first over the time between first and last', () => {
    expect(speedText(11, 1000, 2000)).toBe('11 tokens in 1.00 s · 10.0 tok/s');
  });
  it('says nothing for zero or one token, or no elapsed time', () => {
    expect(speedText(0, 0, 0)).toBeNull();
    expect(speedText(1, 5, 5)).toBeNull();
    expect(speedText(3, 5, 5)).toBeNull();
  });
});

describe('model info', () => {
  it('detects the ChatML fallback by the same template text the library uses', () => {
    expect(CHATML_FALLBACK_TEMPLATE).toBe(CHATML_TEMPLATE);
  });
  it('reads the quantization from usual file names', () => {
    expect(quantFromFileName('Llama-3.2-1B-Instruct-Q4_K_M.gguf')).toBe('Q4_K_M');
    expect(quantFromFileName('smollm2-360m-instruct-q8_0.gguf')).toBe('Q8_0');
    expect(quantFromFileName('model-f16.gguf')).toBe('F16');
    expect(quantFromFileName('stories260K.gguf')).toBeNull();
  });
});
