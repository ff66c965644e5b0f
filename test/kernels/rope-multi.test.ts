/**
 * Multi-stream rope (ggml_rope_multi: qwen2vl's M-RoPE, qwen3vl's interleaved M-RoPE) on the reference and WASM
 * backends: the stream layout of the real models' sections, the reference's angles against the formula (pair i of
 * row r rotated by p_s(r) · θ^(−2i/nRot) for its stream s), image grid positions and the text rows' (p, p, p, 0),
 * and WASM equal to the reference on every case of the shared scenario.
 */

import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { imageRopePositions, ropeStreamOf, textRopePositions } from '../../src/backend/rope-multi.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import {
  MANY_SEQUENCES,
  manyInputs,
  manyPosition,
  MULTI_CASES,
  MULTI_COLS,
  MULTI_ROWS,
  runMultiRope,
  scenarioValues,
} from '../helpers/rope-multi-scenario.js';

describe('multi-stream rope', () => {
  it("lays pairs out as ggml does: Qwen2-VL's consecutive sections, Qwen3-VL's interleaved ones", () => {
    const q2 = Array.from({ length: 64 }, (_, i) => ropeStreamOf({ sections: [16, 24, 24, 0], interleaved: false }, i));
    expect(q2.slice(0, 16).every((s) => s === 0)).toBe(true);
    expect(q2.slice(16, 40).every((s) => s === 1)).toBe(true);
    expect(q2.slice(40).every((s) => s === 2)).toBe(true);
    const q3 = Array.from({ length: 64 }, (_, i) => ropeStreamOf({ sections: [24, 20, 20, 0], interleaved: true }, i));
    expect(q3.slice(0, 6)).toEqual([0, 1, 2, 0, 1, 2]);
    expect(q3.slice(57)).toEqual([0, 1, 2, 0, 3, 3, 0]); // pairs 61, 62 fall past 3·20: the e stream
    // Sections summing to fewer pairs than the head has wrap around (sector = pair mod Σ).
    expect(ropeStreamOf({ sections: [1, 1, 1, 1], interleaved: false }, 7)).toBe(3);
    expect(ropeStreamOf({ sections: [1, 1, 1, 1], interleaved: false }, 5)).toBe(1);
  });

  it('positions: image grid (t, t + row, t + col, 0), text rows (p, p, p, 0)', () => {
    expect(Array.from(imageRopePositions(7, 3, 2))).toEqual([
      ...[7, 7, 7, 7, 7, 7],
      ...[7, 7, 7, 8, 8, 8],
      ...[7, 8, 9, 7, 8, 9],
      ...[0, 0, 0, 0, 0, 0],
    ]);
    expect(Array.from(textRopePositions(4, 2))).toEqual([4, 5, 4, 5, 4, 5, 0, 0]);
  });

  it('the reference rotates each pair by its stream position (the formula)', async () => {
    const got = await runMultiRope(createCpuOps());
    MULTI_CASES.forEach(([name, params, positions, startPos], c) => {
      const x = scenarioValues(MULTI_ROWS * MULTI_COLS, c + 1);
      const pos = positions ?? textRopePositions(startPos, MULTI_ROWS);
      const half = params.nRot / 2;
      for (let r = 0; r < MULTI_ROWS; r++) {
        for (let base = r * MULTI_COLS; base < (r + 1) * MULTI_COLS; base += params.headDim) {
          for (let i = 0; i < half; i++) {
            const p = pos[ropeStreamOf(params.multi!, i) * MULTI_ROWS + r]!;
            const theta = p * Math.pow(params.theta, (-2 * i) / params.nRot);
            const [x0, x1] = [x[base + i]!, x[base + i + half]!];
            expect(got[c]![base + i], name).toBeCloseTo(x0 * Math.cos(theta) - x1 * Math.sin(theta), 5);
            expect(got[c]![base + i + half], name).toBeCloseTo(x0 * Math.sin(theta) + x1 * Math.cos(theta), 5);
          }
        }
      }
    });
  });

  it('setSequence returns to text positions', async () => {
    const got = await runMultiRope(createCpuOps());
    const x = scenarioValues(MULTI_ROWS * MULTI_COLS, 9).subarray(0, MULTI_COLS);
    const i = 1; // stream h: position 23 as a text row
    const theta = 23 * Math.pow(10000, -2 / 16);
    expect(got[3]![i]).toBeCloseTo(x[i]! * Math.cos(theta) - x[i + 8]! * Math.sin(theta), 5);
  });

  it('setSequence with streams rotates each sequence of a step at its own', async () => {
    const got = await runMultiRope(createCpuOps());
    const params = MULTI_CASES[0]![1];
    [
      [10, 17],
      [11, 9],
    ].forEach(([seed, p], k) => {
      const x = scenarioValues(MULTI_COLS, seed!);
      const want = new Float32Array(MULTI_COLS);
      for (let base = 0; base < MULTI_COLS; base += 16) {
        for (let i = 0; i < 8; i++) {
          const at = ropeStreamOf(params.multi!, i) === 3 ? 0 : p!; // text rows: (p, p, p, 0)
          const theta = at * Math.pow(params.theta, -i / 8);
          want[base + i] = x[base + i]! * Math.cos(theta) - x[base + i + 8]! * Math.sin(theta);
          want[base + i + 8] = x[base + i]! * Math.sin(theta) + x[base + i + 8]! * Math.cos(theta);
        }
      }
      for (let j = 0; j < MULTI_COLS; j++) expect(got[4 + k]![j]).toBeCloseTo(want[j]!, 5);
    });
  });

  it('twenty sequences of one step: each row at its own streams', async () => {
    const got = (await runMultiRope(createCpuOps()))[6]!;
    const params = MULTI_CASES[0]![1];
    const x = manyInputs();
    for (let r = 0; r < MANY_SEQUENCES; r++) {
      for (let base = r * MULTI_COLS; base < (r + 1) * MULTI_COLS; base += 16) {
        for (let i = 0; i < 8; i++) {
          const at = ropeStreamOf(params.multi!, i) === 3 ? 0 : manyPosition(r); // text rows: (p, p, p, 0)
          const theta = at * Math.pow(params.theta, -i / 8);
          expect(got[base + i], `row ${r} pair ${i}`).toBeCloseTo(
            x[base + i]! * Math.cos(theta) - x[base + i + 8]! * Math.sin(theta),
            4,
          );
        }
      }
    }
  });

  it('WASM equals the reference on every case', async () => {
    const want = await runMultiRope(createCpuOps());
    const got = await runMultiRope(await createWasmOps({ variant: 'simd128', threads: 1 }));
    got.forEach((g, c) => {
      for (let j = 0; j < g.length; j++) expect(Math.abs(g[j]! - want[c]![j]!), `case ${c} [${j}]`).toBeLessThan(1e-5);
    });
  });
});
