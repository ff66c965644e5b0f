/**
 * `routeToken` (the cpu and WASM routing) on a hand-computed token: softmax probabilities, top-k, normalised weights,
 * then the per-expert weight scale (gemma4's `ffn_down_exps.scale`) applied to the selected experts by their ids.
 */

import { describe, expect, it } from 'vitest';
import { routeToken } from '../../../src/backend/moe-route.js';

describe('routeToken', () => {
  it('multiplies each selected weight by its expert’s scale after normalising', () => {
    const logits = Float32Array.of(0, Math.log(3), Math.log(2), Math.log(4)); // probabilities 0.1, 0.3, 0.2, 0.4
    const ids = new Float32Array(2);
    const weights = new Float32Array(2);
    const rows = { logits, logitsAt: 0, ids, idsAt: 0, weights, weightsAt: 0 };
    const params = { gating: 'softmax', normWeights: true, scale: 1, selectionBias: null } as const;
    routeToken(rows, 4, 2, params, new Float32Array(4));
    expect([...ids]).toEqual([3, 1]);
    expect(weights[0]).toBeCloseTo(4 / 7, 6);
    const scale = Float32Array.of(9, 9, 0.5, 2, 3, 9); // the model’s [4] values start at index 1: 9, 0.5, 2, 3
    routeToken(rows, 4, 2, params, new Float32Array(4), null, 0, scale, 1);
    expect([...ids]).toEqual([3, 1]);
    expect(weights[0]).toBeCloseTo((4 / 7) * 3, 6);
    expect(weights[1]).toBeCloseTo((3 / 7) * 0.5, 6);
  });
});
