/**
 * The mixture-of-experts ops of a backend against the reference backend (createCpuOps), on random data: routing
 * (softmax and sigmoid, normalised or not, scaled), the gather matmul over selected experts with the activations
 * broadcast per token or one row per slot, the weighted sum and the sigmoid-gated add (and gpt-oss's softmax-weight
 * routing, per-expert biases and clamped SwiGLU). The expert the router never
 * picks is filled with 0xFF bytes (NaN scales or values in every type): any read of an unselected expert's rows
 * shows up as a non-finite output. Inputs enter through `embed` of f32 tables (Ops has no host write).
 */

import { expect } from 'vitest';
import type { Activation, Ops, Weight } from '../../src/backend/ops.js';
import type { MoeRouteParams } from '../../src/backend/moe-step.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType, tensorByteLength } from '../../src/quant/index.js';
import { mulberry32 } from './mulberry32.js';

/** One shape of the check. */
export interface ExpertCase {
  readonly type: GgmlType;
  readonly nExperts: number;
  /** Rows of one expert (odd counts exercise row-pair layouts across experts). */
  readonly rows: number;
  readonly k: number;
  readonly nUsed: number;
  /** Tokens of the step (> 1: prefill grouping). */
  readonly n: number;
  readonly route: Omit<MoeRouteParams, 'selectionBias' | 'expertScale'>;
  /** Route with a random per-expert selection bias (`exp_probs_b`). */
  readonly withBias?: boolean;
  /**
   * gpt-oss's extras: per-expert biases added to the gate rows (`addExpertBias`; the never-routed expert's are NaN),
   * then `swigluOai(gate rows, 10 · hidden)`, crossing both clamps (±7).
   */
  readonly oai?: boolean;
  /** Route with a random per-expert weight scale (gemma4's `ffn_down_exps.scale`). */
  readonly withScale?: boolean;
}

function weightBytes(c: ExpertCase, rand: () => number): Uint8Array {
  const rowsAll = c.nExperts * c.rows;
  const values = Float32Array.from({ length: rowsAll * c.k }, () => rand() / Math.sqrt(c.k)); // [nExperts·rows, k]
  let bytes: Uint8Array;
  if (c.type === GgmlType.F32) bytes = new Uint8Array(values.buffer);
  else {
    bytes = new Uint8Array(tensorByteLength(c.type, [c.k, c.rows, c.nExperts]));
    const qt = getQuantType(c.type);
    const rowBytes = bytes.length / rowsAll;
    for (let r = 0; r < rowsAll; r++) {
      qt.quantizeRow!(values.subarray(r * c.k, (r + 1) * c.k), bytes.subarray(r * rowBytes, (r + 1) * rowBytes));
    }
  }
  const lastExpert = bytes.length - bytes.length / c.nExperts;
  bytes.fill(0xff, lastExpert); // never routed to: NaN if read
  return bytes;
}

async function table(ops: Ops, name: string, values: Float32Array, cols: number): Promise<Weight> {
  return ops.uploadWeight(
    { name, type: GgmlType.F32, shape: [cols, values.length / cols] },
    new Uint8Array(values.buffer.slice(0)),
  );
}

/** Runs the MoE ops of `c` on `ops`; returns ids, weights, gate rows, per-slot down rows, combined and gated sums. */
async function runCase(ops: Ops, c: ExpertCase, seed: number): Promise<Float32Array[]> {
  const rand = (
    (r) => () =>
      r() * 2 - 1
  )(mulberry32(seed));
  const { n, k, nUsed, nExperts, rows } = c;
  const x = Float32Array.from({ length: n * k }, rand); // [n, k]
  const logits = Float32Array.from({ length: n * nExperts }, (_, i) =>
    i % nExperts === nExperts - 1 ? -50 : 3 * rand(),
  );
  const hidden = Float32Array.from({ length: n * nUsed * rows }, rand); // [n·nUsed, rows]: down's per-slot input
  const gateLogit = Float32Array.from({ length: n }, rand); // [n, 1]
  const w = await ops.uploadWeight(
    { name: 'exps', type: c.type, shape: [k, rows, nExperts] },
    weightBytes(c, mulberry32(seed + 1)),
  );
  // down's rows are `rows` long: its own type falls back to F16 when they are not whole blocks (as llama.cpp's mixes).
  const downType = rows % getQuantType(c.type).blockElements === 0 ? c.type : GgmlType.F16;
  const down = await ops.uploadWeight(
    { name: 'down_exps', type: downType, shape: [rows, k, nExperts] },
    weightBytes({ ...c, type: downType, rows: k, k: rows }, mulberry32(seed + 2)),
  );
  const a = (label: string, r: number, cols: number): Activation => ops.createActivation(label, r, cols);
  const xs = a('x', n, k);
  const lg = a('logits', n, nExperts);
  const hid = a('hidden', n * nUsed, rows);
  const gl = a('gate_logit', n, 1);
  const ids = a('ids', n, nUsed);
  const wts = a('weights', n, nUsed);
  const out = a('gate', n * nUsed, rows);
  const outDown = a('down', n * nUsed, k);
  const sum = a('sum', n, k);
  const tokens = Int32Array.from({ length: n }, (_, i) => i);
  // A selection bias of the size of the probabilities' spread; the never-routed last expert keeps a large penalty.
  const biasValues = Float32Array.from({ length: nExperts }, (_, e) => (e === nExperts - 1 ? -100 : 0.3 * rand()));
  const selectionBias = c.withBias
    ? await ops.uploadWeight(
        { name: 'exp_probs_b', type: GgmlType.F32, shape: [nExperts] },
        new Uint8Array(biasValues.buffer),
      )
    : null;
  const scaleValues = Float32Array.from({ length: nExperts }, () => 1 + 0.5 * rand()); // [nExperts] in 0.5 … 1.5
  const expertScale = c.withScale
    ? await ops.uploadWeight(
        { name: 'down_exps.scale', type: GgmlType.F32, shape: [nExperts] },
        new Uint8Array(scaleValues.buffer),
      )
    : null;
  ops.beginStep({ tokens, startPos: 0, slot: 0 });
  ops.embed(xs, await table(ops, 'x', x, k), n);
  ops.embed(lg, await table(ops, 'l', logits, nExperts), n);
  ops.embed(gl, await table(ops, 'g', gateLogit, 1), n);
  ops.endStep();
  // hidden has n·nUsed rows: embed it with that many tokens.
  ops.beginStep({ tokens: Int32Array.from({ length: n * nUsed }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(hid, await table(ops, 'h', hidden, rows), n * nUsed);
  ops.endStep();
  ops.beginStep({ tokens, startPos: 0, slot: 0 });
  ops.moeRoute(ids, wts, lg, n, { ...c.route, selectionBias, expertScale });
  ops.matmulExperts(out, xs, w, nExperts, ids, n, false);
  ops.matmulExperts(outDown, hid, down, nExperts, ids, n, true);
  ops.moeCombine(sum, outDown, wts, n);
  ops.sigmoidGatedAdd(sum, xs, gl, n);
  const sw = a('swiglu_oai', n * nUsed, rows);
  if (c.oai) {
    // [nExperts·rows] f32, the last (never routed) expert's NaN
    const bias = Float32Array.from({ length: nExperts * rows }, (_, i) =>
      i >= (nExperts - 1) * rows ? Number.NaN : 5 * rand(),
    );
    const bw = await ops.uploadWeight(
      { name: 'gate_exps.bias', type: GgmlType.F32, shape: [nExperts * rows] },
      new Uint8Array(bias.buffer),
    );
    ops.addExpertBias(out, bw, ids, n);
    const up = a('up', n * nUsed, rows);
    ops.copyRows(up, hid, 0, n * nUsed);
    ops.scale(up, 10, n * nUsed); // crosses both clamps (±7)
    ops.swigluOai(sw, out, up, n * nUsed);
  }
  ops.endStep();
  const parts = [
    ops.read(ids, n),
    ops.read(wts, n),
    ops.read(out, n * nUsed),
    ops.read(outDown, n * nUsed),
    ops.read(sum, n),
  ];
  if (c.oai) parts.push(ops.read(sw, n * nUsed));
  return Promise.all(parts);
}

const PARTS = [
  'ids',
  'weights',
  'matmulExperts(x per token)',
  'matmulExperts(x per slot)',
  'combine + gated add',
  'swigluOai',
];

/** Checks `ops` against `ref` on case `c`: ids equal, the rest within `rel` (relative to max(1, |ref|)). */
export async function expectExpertOpsMatch(ops: Ops, ref: Ops, c: ExpertCase, rel: number, seed = 7): Promise<void> {
  const [got, want] = [await runCase(ops, c, seed), await runCase(ref, c, seed)];
  for (let p = 0; p < want.length; p++) {
    const what = `${getQuantType(c.type).name} ${c.nExperts}×${c.rows}×${c.k} top-${c.nUsed} n=${c.n}: ${PARTS[p]}`;
    for (let i = 0; i < want[p].length; i++) {
      if (!Number.isFinite(got[p][i])) expect.fail(`${what}[${i}] is ${got[p][i]} (an unselected expert was read?)`);
      const tol = p === 0 ? 0 : rel * Math.max(1, Math.abs(want[p][i]));
      if (!(Math.abs(got[p][i] - want[p][i]) <= tol))
        expect.fail(`${what}[${i}]: ${got[p][i]} vs reference ${want[p][i]}`);
    }
  }
}

/** Softmax routing with normalised weights, the common case. */
export const SOFTMAX_NORM = { gating: 'softmax', normWeights: true, scale: 1 } as const;
/**
 * The cases every backend's MoE ops are checked on: fused Q8 kernels (Q8_0 with odd rows per expert, Q4_K), an
 * f32-activation kernel (F16), a dequantize-only type (Q2_K), gpt-oss's biases and clamped SwiGLU (MXFP4), gemma4's
 * per-expert scale; decode and grouped prefill.
 */
export const EXPERT_CASES: readonly ExpertCase[] = [
  { type: GgmlType.Q8_0, nExperts: 7, rows: 33, k: 64, nUsed: 2, n: 1, route: SOFTMAX_NORM },
  {
    type: GgmlType.Q8_0,
    nExperts: 7,
    rows: 33,
    k: 64,
    nUsed: 3,
    n: 6,
    route: { gating: 'sigmoid', normWeights: false, scale: 2.5 },
  },
  { type: GgmlType.Q4_K, nExperts: 5, rows: 16, k: 256, nUsed: 4, n: 5, route: SOFTMAX_NORM },
  {
    type: GgmlType.F16,
    nExperts: 4,
    rows: 9,
    k: 32,
    nUsed: 1,
    n: 3,
    route: { gating: 'softmax', normWeights: false, scale: 1 },
  },
  { type: GgmlType.Q2_K, nExperts: 3, rows: 8, k: 256, nUsed: 2, n: 2, route: SOFTMAX_NORM },
  { type: GgmlType.Q8_0, nExperts: 9, rows: 32, k: 64, nUsed: 4, n: 3, route: SOFTMAX_NORM, withBias: true },
  {
    type: GgmlType.MXFP4,
    nExperts: 5,
    rows: 32,
    k: 64,
    nUsed: 3,
    n: 4,
    route: { gating: 'softmax-weight', normWeights: false, scale: 1 },
    oai: true,
  },
  { type: GgmlType.Q8_0, nExperts: 9, rows: 32, k: 64, nUsed: 4, n: 3, route: SOFTMAX_NORM, withScale: true },
];
