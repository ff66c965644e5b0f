/**
 * The relaxed dot-add probe (src/backend/wasm/dot-add-probe.ts) that decides whether the relaxed-dot kernel build
 * may run: classified by the lane that only `vpdpbusd` answers with −102400, and only when the defined-range lanes
 * are exact. Node 20's V8 gets them wrong, so here the build is refused when forced.
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { classifyDotAdd, probeDotAdd } from '../../../src/backend/wasm/dot-add-probe.js';
import { bestVariant, isVariantSupported } from '../../../src/backend/wasm/loader.js';
import { createWasmOps, detectWasmFeatures } from '../../../src/backend/wasm/index.js';
import { LlmError } from '../../../src/errors.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describe('dot-add probe', () => {
  it('classifies the lowerings by their answers', () => {
    expect(classifyDotAdd([-102400, 106, -930, -39993])).toBe('fast'); // AVX-VNNI vpdpbusd (Chromium 156 here)
    expect(classifyDotAdd([28672, 106, -930, -39993])).toBe('exact'); // a signed dot (Arm sdot)
    expect(classifyDotAdd([-65536, 106, -930, -39993])).toBe('exact'); // pmaddubsw + pmaddwd, saturating
    expect(classifyDotAdd([-131072, -1788, 140, -80000])).toBe('none'); // Node 20.20 (V8 11.3): wrong sums
    expect(classifyDotAdd([-102400, 106, -930, -39992])).toBe('none'); // one defined lane off
    expect(classifyDotAdd(null)).toBe('none');
  });

  it('picks the relaxed-dot build only for the vpdpbusd answer', () => {
    const base = { simd128: true, relaxedSimd: true, threads: false };
    expect(bestVariant({ ...base, dotAdd: 'fast' })).toBe('relaxed-dot');
    expect(bestVariant({ ...base, dotAdd: 'exact' })).toBe('relaxed-simd');
    expect(isVariantSupported('relaxed-dot', { ...base, dotAdd: 'exact' })).toBe(false);
    expect(isVariantSupported('relaxed-dot', { ...base, dotAdd: 'fast' })).toBe(true);
  });

  it('this engine: the probe runs, and a forced relaxed-dot build is refused unless it is fast', async () => {
    const lanes = probeDotAdd();
    const features = detectWasmFeatures();
    expect(features.dotAdd).toBe(features.relaxedSimd ? classifyDotAdd(lanes) : 'none');
    if (features.dotAdd === 'fast') return;
    const err = await createWasmOps({ variant: 'relaxed-dot', threads: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    expect((err as LlmError).code).toBe('feature-missing');
    expect((err as LlmError).message).toContain('relaxed dot-add');
  });
});
