/**
 * `EngineOptions.contextShift` (issue #20): with it, a generation goes on past the context limit (llama.cpp's
 * context shift: keep BOS, drop the oldest half of the rest, re-rotate the kept keys); without it, completions end
 * with 'length' when the context fills. After a shift the prompt cache keeps only the cells before the dropped
 * range, so the next request never reuses shifted cells as if they held the original prefix.
 * (The logits after a shift are checked against llama.cpp in test/reference/context-shift-conformance.test.ts.)
 */

import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import type { Completion } from '../../../src/api/types.js';
import { RECORDED_FIXTURE_DIR, sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');
const CTX = 32;
const PROMPT = 'Once upon a time, there was a little girl named Lily. She';

async function engineWith(contextShift?: boolean) {
  return createEngine({
    model: MODEL,
    backend: 'cpu',
    contextLength: CTX,
    slots: 1,
    warmup: false,
    ...(contextShift !== undefined ? { contextShift } : {}),
  });
}

describe('context shift (stories260K, contextLength 32)', () => {
  it('keeps generating past the context, then the prompt cache serves only unshifted cells', async () => {
    const engine = await engineWith(true);
    const r = (await engine.completions.create({ prompt: PROMPT, max_tokens: 60, temperature: 0 })) as Completion;
    expect(r.usage.completion_tokens).toBe(60);
    expect(r.usage.total_tokens).toBeGreaterThan(CTX);
    expect(r.choices[0].finish_reason).toBe('length');
    // Without the shift record cut, the same prompt would reuse all but its last token from the shifted slot.
    const again = (await engine.completions.create({ prompt: PROMPT, max_tokens: 8, temperature: 0 })) as Completion;
    expect(again.usage.prompt_tokens_details.cached_tokens).toBeLessThanOrEqual(1);
    await engine.unload();
    const fresh = await engineWith(true);
    const want = (await fresh.completions.create({ prompt: PROMPT, max_tokens: 8, temperature: 0 })) as Completion;
    expect(again.choices[0].text).toBe(want.choices[0].text);
    await fresh.unload();
    // The first CTX − prompt tokens are the unshifted run's (the shift happens only when the context is full).
    const plain = await engineWith(); // completions: no shift unless asked
    const short = (await plain.completions.create({ prompt: PROMPT, max_tokens: 1000, temperature: 0 })) as Completion;
    await plain.unload();
    expect(short.usage.total_tokens).toBe(CTX);
    expect(r.choices[0].text.startsWith(short.choices[0].text)).toBe(true);
  });
});

describe('context shift on an M-RoPE model (qwen2vl)', () => {
  it('is not done (as llama.cpp): the generation stops at the context limit', async () => {
    const engine = await createEngine({
      model: `${RECORDED_FIXTURE_DIR}/qwen2vl-q8_0-s1.gguf`,
      backend: 'cpu',
      contextLength: CTX,
      slots: 1,
      warmup: false,
      contextShift: true,
    });
    const r = (await engine.completions.create({ prompt: PROMPT, max_tokens: 60, temperature: 0 })) as Completion;
    await engine.unload();
    expect(r.usage.total_tokens).toBe(CTX);
    expect(r.choices[0].finish_reason).toBe('length');
  });
});
