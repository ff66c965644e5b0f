/**
 * WASM decode attention with its positions split across threads (src/backend/wasm/attention-split.ts,
 * wasm/assembly/attention-split.ts), taken when a model has fewer KV heads than threads: with two threads and one KV
 * head, decode rows past 512 positions run as parts of whole 128-position blocks, combined on the host. Checked
 * against the same steps on one thread (heads on one thread, no split: within rounding of the combine) and the
 * reference backend (f64), for f32 and f16 KV, a sliding window, soft-capping, and head sizes with tails (36, 6);
 * the split path must really run (its entry point is spied on).
 */

import { describe, expect, it, vi } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { KvType } from '../../src/backend/kv-type.js';
import type { Ops } from '../../src/backend/ops.js';
import * as split from '../../src/backend/wasm/attention-split.js';
import { createWasmOps, detectWasmFeatures } from '../../src/backend/wasm/index.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';
import { mulberry32 } from '../helpers/mulberry32.js';
import { setActivation } from '../helpers/set-activation.js';

vi.mock('../../src/backend/wasm/attention-split.js', async (original) => {
  const actual = await original<typeof import('../../src/backend/wasm/attention-split.js')>();
  return { ...actual, runSplit: vi.fn(actual.runSplit) };
});

const random = (n: number, next: () => number): Float32Array => Float32Array.from({ length: n }, () => next() * 2 - 1);

interface Case {
  readonly kvType: KvType;
  readonly nHeads: number;
  readonly nKvHeads: number;
  readonly headDim: number;
  readonly slidingWindow: number;
  readonly softcap: number;
}

/** A prompt of 700 rows, then three decode steps (the last two read past 700 positions). */
const STEPS: readonly (readonly [number, number])[] = [
  [0, 700],
  [700, 1],
  [701, 1],
  [702, 1],
];

/** Outputs of the decode steps (the prompt's are not split) on slot 0 of layer 0. */
async function run(ops: Ops, c: Case, seed: number): Promise<Float32Array[]> {
  const next = mulberry32(seed);
  const { nHeads, nKvHeads, headDim } = c;
  const params = {
    nHeads,
    nKvHeads,
    headDim,
    scale: 1 / Math.sqrt(headDim),
    slidingWindow: c.slidingWindow,
    softcap: c.softcap,
  };
  ops.createKvCache({ nSlots: 1, contextLength: 704, layers: uniformKvLayers(1, nKvHeads, headDim), kvType: c.kvType });
  const out: Float32Array[] = [];
  for (const [startPos, n] of STEPS) {
    const q = await setActivation(ops, random(n * nHeads * headDim, next), n, nHeads * headDim);
    const k = await setActivation(ops, random(n * nKvHeads * headDim, next), n, nKvHeads * headDim);
    const v = await setActivation(ops, random(n * nKvHeads * headDim, next), n, nKvHeads * headDim);
    const o = ops.createActivation('o', n, nHeads * headDim);
    ops.beginStep({ tokens: new Int32Array(n), startPos, slot: 0 });
    ops.storeKv(0, k, v, n);
    ops.attention(o, q, 0, n, params);
    ops.endStep();
    if (n === 1) out.push(await ops.read(o, n));
  }
  return out;
}

const CASES: Case[] = [
  { kvType: 'f32', nHeads: 7, nKvHeads: 1, headDim: 64, slidingWindow: 0, softcap: 0 },
  { kvType: 'f16', nHeads: 7, nKvHeads: 1, headDim: 64, slidingWindow: 0, softcap: 0 },
  { kvType: 'f32', nHeads: 4, nKvHeads: 1, headDim: 36, slidingWindow: 600, softcap: 0 },
  { kvType: 'f16', nHeads: 3, nKvHeads: 1, headDim: 6, slidingWindow: 0, softcap: 2 },
];

const features = detectWasmFeatures();

for (const variant of ['scalar', features.relaxedSimd ? 'relaxed-simd' : 'simd128'] as const) {
  describe(`wasm decode attention split across positions (${variant})`, () => {
    it.each(CASES)(
      '$kvType, $nHeads heads / $nKvHeads KV head × $headDim, window $slidingWindow, softcap $softcap',
      async (c) => {
        const runSplit = vi.mocked(split.runSplit);
        const one = await createWasmOps({ variant, threads: 1 });
        const single = await run(one, c, 3);
        one.destroy();
        runSplit.mockClear();
        const two = await createWasmOps({ variant, threads: 2 });
        const parts = await run(two, c, 3);
        two.destroy();
        expect(runSplit).toHaveBeenCalledTimes(STEPS.length - 1);
        const ref = await run(createCpuOps(), c, 3);
        for (let s = 0; s < ref.length; s++) {
          expect(parts[s].length).toBe(ref[s].length);
          for (let i = 0; i < ref[s].length; i++) {
            if (!(Math.abs(parts[s][i] - single[s][i]) <= 2e-6))
              expect.fail(`step ${s} [${i}]: split ${parts[s][i]} vs one thread ${single[s][i]}`);
            if (!(Math.abs(parts[s][i] - ref[s][i]) <= 2e-4))
              expect.fail(`step ${s} [${i}]: split ${parts[s][i]} vs reference ${ref[s][i]}`);
          }
        }
      },
    );
  });
}

describe('splitParts', () => {
  it('splits only decode rows of enough positions with fewer KV heads than threads', () => {
    expect(split.splitParts(1, 2, 4096, 7)).toBe(4);
    expect(split.splitParts(2, 4, 4096, 7)).toBe(4);
    expect(split.splitParts(2, 2, 4096, 7)).toBe(0); // as many KV heads as threads: whole groups per thread
    expect(split.splitParts(1, 2, 511, 7)).toBe(0); // too few positions
    expect(split.splitParts(1, 8, 4096, 7)).toBe(7); // at most the group size (the scratch's bound)
    expect(split.splitParts(1, 8, 600, 7)).toBe(5); // at most the blocks there are
  });
});
