/**
 * The multi-stream rope scenario every backend runs (test/kernels/rope-multi.test.ts, webgpu-rope-multi.gpu.test.ts):
 * an image's grid positions with consecutive and interleaved sections (sections summing to fewer pairs than the
 * head has, so sectors wrap, and an e section), text rows at an offset, a `setSequence` back to text rows after
 * an image step, and two, then twenty sequences of one step each at its own streams (`setSequence` with positions). Results are compared with the plain-TS reference, itself checked against the formula.
 */

import type { Ops, RopeParams } from '../../src/backend/ops.js';
import { imageRopePositions, type RopePositions, textRopePositions } from '../../src/backend/rope-multi.js';

/** Head size 16 (8 pairs), 2 heads, 6 rows. */
export const MULTI_ROWS = 6;
export const MULTI_COLS = 32;

/** The cases: name, parameters, the step's explicit streams (null: text rows) and its start position. */
export const MULTI_CASES: readonly [string, RopeParams, RopePositions | null, number][] = [
  [
    'mrope image [3,2,2,1]',
    {
      kind: 'neox',
      headDim: 16,
      nRot: 16,
      theta: 10000,
      freqScale: 1,
      multi: { sections: [3, 2, 2, 1], interleaved: false },
    },
    imageRopePositions(5, 3, 2),
    5,
  ],
  [
    'imrope image [3,2,1,0] (wraps)',
    {
      kind: 'neox',
      headDim: 16,
      nRot: 16,
      theta: 1e6,
      freqScale: 1,
      multi: { sections: [3, 2, 1, 0], interleaved: true },
    },
    imageRopePositions(11, 2, 3),
    11,
  ],
  [
    'imrope text rows [2,2,2,2]',
    {
      kind: 'neox',
      headDim: 16,
      nRot: 16,
      theta: 10000,
      freqScale: 1,
      multi: { sections: [2, 2, 2, 2], interleaved: true },
    },
    null,
    40,
  ],
];

/** Deterministic values in [-1, 1). */
export function scenarioValues(n: number, seed: number): Float32Array {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: n }, () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 31 - 1;
  });
}

/** Runs every case on `ops` (then a `setSequence` back to text rows); returns the rotated rows of each. */
export async function runMultiRope(ops: Ops): Promise<Float32Array[]> {
  const out: Float32Array[] = [];
  const x = ops.createActivation('x', MULTI_ROWS, MULTI_COLS); // [6, 2 heads · 16]
  const cases = MULTI_CASES.map(([, p, pos, start], i) => [p, pos, start, i] as const);
  for (const [params, positions, startPos, i] of cases) {
    const tokens = new Int32Array(MULTI_ROWS);
    ops.beginStep({ tokens, startPos, slot: 0, ...(positions ? { positions } : {}) });
    ops.setRows(x, scenarioValues(MULTI_ROWS * MULTI_COLS, i + 1), MULTI_ROWS);
    ops.rope(x, MULTI_ROWS, params);
    ops.endStep();
    out.push(await ops.read(x, MULTI_ROWS));
  }
  // An image step whose second sequence is a text row: setSequence forgets the image's streams.
  const [, params, positions] = MULTI_CASES[0]!;
  ops.beginStep({ tokens: new Int32Array(MULTI_ROWS), startPos: 5, slot: 0, positions: positions! });
  ops.setRows(x, scenarioValues(MULTI_ROWS * MULTI_COLS, 9), MULTI_ROWS);
  ops.setSequence(0, 23);
  ops.rope(x, 1, params);
  ops.endStep();
  out.push(await ops.read(x, 1));
  // Two sequences of one step, each with its own streams (text after an image, n choices): each rotated at its own.
  const y = ops.createActivation('y', 1, MULTI_COLS); // [1, 2 heads · 16]
  ops.beginStep({ tokens: new Int32Array(2), startPos: 23, slot: 0 });
  ops.setRows(x, scenarioValues(MULTI_COLS, 10), 1);
  ops.setRows(y, scenarioValues(MULTI_COLS, 11), 1);
  ops.setSequence(0, 23, textRopePositions(17, 1));
  ops.rope(x, 1, params);
  ops.setSequence(1, 23, textRopePositions(9, 1));
  ops.rope(y, 1, params);
  ops.endStep();
  out.push(await ops.read(x, 1), await ops.read(y, 1));
  // Many sequences of one step at their own streams, row s at text position MANY_POS(s): more streams than WebGPU's
  // position buffer first holds, so it grows mid-step (each row still rotated at its own).
  const z = ops.createActivation('z', MANY_SEQUENCES, MULTI_COLS); // [20, 2 heads · 16] inputs
  const rotated = ops.createActivation('rotated', MANY_SEQUENCES, MULTI_COLS); // [20, 2 heads · 16]
  ops.beginStep({ tokens: new Int32Array(MANY_SEQUENCES), startPos: 40, slot: 0 });
  ops.setRows(z, manyInputs(), MANY_SEQUENCES);
  for (let r = 0; r < MANY_SEQUENCES; r++) {
    ops.copyRows(y, z, r, 1);
    ops.setSequence(0, 40, textRopePositions(manyPosition(r), 1));
    ops.rope(y, 1, params);
    ops.copyRows(rotated, y, 0, 1, r);
  }
  ops.endStep();
  out.push(await ops.read(rotated, MANY_SEQUENCES));
  return out;
}

/** Sequences of the last scenario step (`runMultiRope`'s last output, [MANY_SEQUENCES, MULTI_COLS]). */
export const MANY_SEQUENCES = 20;

/** The text rope position of sequence r of the last step. */
export function manyPosition(r: number): number {
  return 3 + 7 * r;
}

/** The last step's input rows [MANY_SEQUENCES, MULTI_COLS]. */
export function manyInputs(): Float32Array {
  return scenarioValues(MANY_SEQUENCES * MULTI_COLS, 12);
}
