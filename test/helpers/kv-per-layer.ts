/**
 * The per-layer KV geometry check every backend runs (issue #13): one cache whose layers have different KV head
 * counts and head sizes must give every layer what a cpu-reference cache of that layer alone gives — no overlapping
 * storage, the right row width per layer — and `copyKv`, `readKv`/`writeKv` follow each layer's width.
 */

import { expect } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Activation, AttentionParams, KvLayerSpec, Ops } from '../../src/backend/ops.js';
import { thrownLlmError } from './llm-error.js';
import { mulberry32 } from './mulberry32.js';
import { setActivation } from './set-activation.js';

const N_HEADS = 4;
const LAYERS: KvLayerSpec[] = [
  { nKvHeads: 2, headDim: 8 },
  { nKvHeads: 1, headDim: 16 },
  { nKvHeads: 4, headDim: 4 },
];
const STEPS = [
  { startPos: 0, n: 5 },
  { startPos: 5, n: 1 },
];
const CONTEXT = 8;

function randomF32(n: number, next: () => number): Float32Array {
  return Float32Array.from({ length: n }, () => next() * 2 - 1);
}

/** Uploads `rows` × `cols` f32 values and embeds them into a new activation. */
interface StepInput {
  readonly q: Float32Array;
  readonly k: Float32Array;
  readonly v: Float32Array;
}

/** Inputs of every (layer, step), from one seed. */
function inputs(): StepInput[][] {
  const next = mulberry32(13);
  return LAYERS.map((l) =>
    STEPS.map((s) => ({
      q: randomF32(s.n * N_HEADS * l.headDim, next),
      k: randomF32(s.n * l.nKvHeads * l.headDim, next),
      v: randomF32(s.n * l.nKvHeads * l.headDim, next),
    })),
  );
}

const params = (l: KvLayerSpec): AttentionParams => ({
  nHeads: N_HEADS,
  nKvHeads: l.nKvHeads,
  headDim: l.headDim,
  scale: 1 / Math.sqrt(l.headDim),
  slidingWindow: 0,
  softcap: 0,
});

/**
 * Stores every step of `layers` (cache layer = index in `layers`) into `slot`, all layers of a step before any
 * attention, then attends on each; returns out[layer][step].
 */
async function run(ops: Ops, layers: readonly number[], slot: number): Promise<Float32Array[][]> {
  const data = inputs();
  const out: Float32Array[][] = layers.map(() => []);
  for (let s = 0; s < STEPS.length; s++) {
    const { startPos, n } = STEPS[s];
    const acts: { q: Activation; o: Activation }[] = [];
    for (const [il, l] of layers.entries()) {
      const g = LAYERS[l];
      const kvCols = g.nKvHeads * g.headDim;
      const k = await setActivation(ops, data[l][s].k, n, kvCols, 'k');
      const v = await setActivation(ops, data[l][s].v, n, kvCols, 'v');
      const q = await setActivation(ops, data[l][s].q, n, N_HEADS * g.headDim, 'q');
      ops.beginStep({ tokens: new Int32Array(n), startPos, slot });
      ops.storeKv(il, k, v, n);
      ops.endStep();
      acts.push({ q, o: ops.createActivation('o', n, N_HEADS * g.headDim) });
    }
    for (const [il, l] of layers.entries()) {
      ops.beginStep({ tokens: new Int32Array(n), startPos, slot });
      ops.attention(acts[il].o, acts[il].q, il, n, params(LAYERS[l]));
      ops.endStep();
      out[il].push(await ops.read(acts[il].o, n));
    }
  }
  return out;
}

function expectClose(got: Float32Array, want: Float32Array, what: string, rel: number): void {
  expect(got.length, what).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    if (!(Math.abs(got[i] - want[i]) <= rel * Math.max(1, Math.abs(want[i])))) {
      expect.fail(`${what}[${i}]: ${got[i]} vs ${want[i]}`);
    }
  }
}

/**
 * Runs the mixed-geometry cache on `ops` and checks it against the reference, within `rel` (relative); also checks
 * the persisted layout when `ops` has `readKv`. `elementBytes`: bytes of one persisted KV value on `ops`.
 */
export async function expectPerLayerKv(ops: Ops, rel: number, elementBytes: 2 | 4): Promise<void> {
  ops.createKvCache({ nSlots: 2, contextLength: CONTEXT, layers: LAYERS });
  const got = await run(ops, [0, 1, 2], 1);
  for (let l = 0; l < LAYERS.length; l++) {
    const alone = createCpuOps();
    alone.createKvCache({ nSlots: 1, contextLength: CONTEXT, layers: [LAYERS[l]] });
    const want = (await run(alone, [l], 0))[0];
    for (let s = 0; s < STEPS.length; s++) expectClose(got[l][s], want[s], `layer ${l} step ${s}`, rel);
  }
  if (!ops.readKv || !ops.writeKv) return;
  // Persisting: one layer after another, each its own width; a write into the other slot reads back the same.
  const rows = await ops.readKv(1, 6);
  const cols = LAYERS.reduce((sum, l) => sum + l.nKvHeads * l.headDim, 0);
  expect(rows.data.byteLength).toBe(2 * 6 * cols * elementBytes);
  if (elementBytes === 4) {
    const first = inputs()[0][0]; // layer 0's K of positions 0…4 leads the record
    expect(new Float32Array(rows.data.slice(0, first.k.byteLength).buffer)).toEqual(first.k);
  }
  await ops.writeKv(0, rows);
  expect((await ops.readKv(0, 6)).data).toEqual(rows.data);
  ops.copyKv(1, 0, 3);
  expect((await ops.readKv(0, 6)).data).toEqual(rows.data);
}

/** Checks that `ops` refuses attention whose geometry is not the layer's own. */
export function expectGeometryRefused(ops: Ops): void {
  ops.createKvCache({ nSlots: 1, contextLength: CONTEXT, layers: LAYERS });
  const q = ops.createActivation('q', 1, N_HEADS * 8);
  const o = ops.createActivation('o', 1, N_HEADS * 8);
  ops.beginStep({ tokens: new Int32Array(1), startPos: 0, slot: 0 });
  const e = thrownLlmError(() => ops.attention(o, q, 1, 1, params(LAYERS[0])));
  expect(e.code).toBe('invalid-request');
  expect(e.message).toMatch(/1 KV heads × 16 on this layer/);
  ops.endStep();
}
