/**
 * The plain-TypeScript reference backend: every `Ops` operation as straightforward loops over f32 storage, with
 * f64 accumulation (JS numbers) in dot products, norms and softmax. Weights are dequantized to f32 at upload through
 * the quant registry. Slow and obviously right: the yardstick the WASM and WebGPU backends are tested against.
 */

import { LlmError, throwIfAborted } from '../../errors.js';
import { GGML_TYPES, GgmlType } from '../../gguf/types.js';
import { getQuantType } from '../../quant/index.js';
import type { Activation, AttentionParams, GluActivation, KvCacheSpec, KvRows, Ops } from '../ops.js';
import type { RopeParams, StepBatch, TopK, Weight, WeightInfo } from '../ops.js';
import type { MoeRouteParams } from '../moe-step.js';
import { checkAttentionGeometry, kvLayerCols, readKvBytes, writeKvBytes } from '../kv-rows.js';
import { checkKvShift, type KvShift, shiftKvBytes } from '../kv-shift.js';
import {
  checkKvType,
  decodeKvRow,
  encodeKvRow,
  hadamardRows,
  type KvType,
  kvRotations,
  kvRowBytes,
  roundQueryForKv,
} from '../kv-type.js';
import { attentionRows, type KvLayer } from './attention.js';
import { ropeRows } from './rope.js';
import { topKScan } from './top-k.js';
import { routeToken } from '../moe-route.js';
import { HostHybridOps } from '../host-hybrid-ops.js';
import type { HostView } from '../delta-net.js';

/** One layer's K and V of one slot as stored: [contextLength, kvRowBytes] bytes each (the cache's KV type). */
interface KvBytes {
  readonly k: Uint8Array;
  readonly v: Uint8Array;
}
/** A weight on the CPU backend: always dequantized to f32. */
interface CpuWeight extends Weight {
  readonly data: Float32Array; // [nRows, rowLength]
}

/** An activation on the CPU backend. */
interface CpuActivation extends Activation {
  readonly data: Float32Array; // [maxRows, cols]
}

/** √(2/π), the constant of the tanh approximation of GELU. */
const GELU_COEF = Math.sqrt(2 / Math.PI);

/** Dequantizes a tensor's raw GGUF bytes (rows of ggml blocks) to f32. */
function dequantize(info: WeightInfo, data: Uint8Array, rowLength: number, nRows: number): Float32Array {
  const out = new Float32Array(rowLength * nRows); // [nRows, rowLength]
  if (info.type === GgmlType.F32) {
    // Copy through a DataView-free path: the bytes may not be 4-byte aligned.
    new Uint8Array(out.buffer).set(data.subarray(0, out.byteLength));
    return out;
  }
  const qt = getQuantType(info.type);
  if (rowLength % qt.blockElements !== 0) {
    throw new LlmError(
      'gguf-invalid',
      `uploading ${info.name}: row length ${rowLength} is not a multiple of the ${qt.name} block size ${qt.blockElements}`,
      { details: { tensor: info.name, rowLength, blockElements: qt.blockElements } },
    );
  }
  qt.dequantizeRow(data, out, out.length);
  return out;
}

/** Plain-TS implementation of `Ops` (see the file header). */
class CpuOps extends HostHybridOps implements Ops {
  readonly name = 'cpu';
  readonly description = 'cpu reference (plain TypeScript, f32 storage, f64 accumulation)';

  private kv: KvBytes[][] = []; // [nSlots][nLayers]
  private kvType: KvType = 'f32';
  private kvSpec: KvCacheSpec | null = null;
  private batch: StepBatch | null = null;

  async uploadWeight(info: WeightInfo, data: Uint8Array, signal?: AbortSignal): Promise<Weight> {
    throwIfAborted(signal, `uploading ${info.name}`);
    const rowLength = info.shape[0];
    const nRows = info.shape.slice(1).reduce((a, b) => a * b, 1);
    const geometry = GGML_TYPES.get(info.type);
    if (!geometry) {
      throw new LlmError('unsupported-type', `uploading ${info.name}: unknown ggml type id ${info.type}`, {
        details: { tensor: info.name, type: info.type },
      });
    }
    const expectedBytes = ((rowLength * nRows) / geometry.blockElements) * geometry.blockBytes;
    if (data.byteLength < expectedBytes) {
      throw new LlmError(
        'gguf-invalid',
        `uploading ${info.name}: got ${data.byteLength} bytes, its ${geometry.name} shape [${info.shape.join(', ')}] needs ${expectedBytes}`,
        { details: { tensor: info.name, byteLength: data.byteLength, expectedBytes } },
      );
    }
    const weight: CpuWeight = {
      name: info.name,
      type: info.type,
      rowLength,
      nRows,
      data: dequantize(info, data, rowLength, nRows),
    };
    return weight;
  }

  createActivation(label: string, maxRows: number, cols: number): Activation {
    const act: CpuActivation = { label, maxRows, cols, data: new Float32Array(maxRows * cols) };
    return act;
  }

  createKvCache(spec: KvCacheSpec): KvType {
    const type = spec.kvType ?? 'f32';
    checkKvType(type, spec.layers);
    this.kvSpec = spec;
    this.kvType = type;
    this.kv = [];
    for (let s = 0; s < spec.nSlots; s++) {
      const layers: KvBytes[] = [];
      for (let l = 0; l < spec.layers.length; l++) {
        const len = spec.contextLength * kvRowBytes(type, kvLayerCols(spec, l)); // [contextLength, row bytes] of layer l
        layers.push({ k: new Uint8Array(len), v: new Uint8Array(len) });
      }
      this.kv.push(layers);
    }
    return type;
  }

  beginStep(batch: StepBatch): void {
    this.batch = batch;
  }

  setSequence(slot: number, startPos: number, positions?: StepBatch['positions']): void {
    this.batch = { ...this.step(), slot, startPos, positions }; // keeps the step's tokens and `sequences`
  }

  embed(out: Activation, table: Weight, n: number): void {
    const o = buf(out);
    const t = (table as CpuWeight).data; // [vocab, rowLength]
    const tokens = this.step().tokens;
    const cols = table.rowLength;
    for (let i = 0; i < n; i++) {
      const id = tokens[i];
      if (!(id >= 0 && id < table.nRows)) {
        throw new LlmError(
          'invalid-request',
          `embedding token ${i}: id ${id} is outside the vocabulary (0…${table.nRows - 1})`,
          {
            details: { index: i, token: id, vocabSize: table.nRows },
          },
        );
      }
      o.set(t.subarray(id * cols, (id + 1) * cols), i * out.cols);
    }
  }

  rmsNorm(out: Activation, x: Activation, weight: Weight | null, eps: number, n: number, groupSize?: number): void {
    const o = buf(out);
    const src = buf(x);
    const g = groupSize ?? x.cols;
    const w = weight ? (weight as CpuWeight).data : null; // [g]
    const groups = (n * x.cols) / g;
    for (let r = 0; r < groups; r++) {
      const base = r * g;
      let sum = 0;
      for (let j = 0; j < g; j++) sum += src[base + j] * src[base + j];
      const inv = 1 / Math.sqrt(sum / g + eps);
      for (let j = 0; j < g; j++) o[base + j] = src[base + j] * inv * (w ? w[j] : 1);
    }
  }

  matmul(out: Activation, x: Activation, w: Weight, n: number, bias?: Weight | null): void {
    if (x.cols !== w.rowLength || out.cols !== w.nRows || n > x.maxRows || n > out.maxRows) {
      throw new LlmError(
        'invalid-request',
        `cpu matmul ${w.name}: x ${x.label} [${n}, ${x.cols}] · W [${w.nRows}, ${w.rowLength}]ᵀ does not fit out ${out.label} [${out.maxRows}, ${out.cols}]`,
      );
    }
    const o = buf(out);
    const src = buf(x);
    const wd = (w as CpuWeight).data; // [nRows, rowLength]
    const b = bias ? (bias as CpuWeight).data : null; // [nRows]
    const k = w.rowLength;
    for (let i = 0; i < n; i++) {
      const xBase = i * x.cols;
      for (let r = 0; r < w.nRows; r++) {
        const wBase = r * k;
        let acc = 0;
        for (let j = 0; j < k; j++) acc += src[xBase + j] * wd[wBase + j];
        o[i * out.cols + r] = b ? acc + b[r] : acc;
      }
    }
  }

  rope(x: Activation, n: number, params: RopeParams): void {
    const { startPos, positions } = this.step();
    ropeRows(buf(x), x.cols, n, startPos, params, positions);
  }

  storeKv(layer: number, k: Activation, v: Activation, n: number): void {
    const { startPos } = this.step();
    const spec = this.requireKv();
    if (startPos + n > spec.contextLength) {
      throw new LlmError(
        'context-overflow',
        `storing KV of positions ${startPos}…${startPos + n - 1}: the context holds ${spec.contextLength} positions`,
        { details: { startPos, n, contextLength: spec.contextLength } },
      );
    }
    const cache = this.layerKv(layer);
    const cols = kvLayerCols(spec, layer);
    if (k.cols < cols || v.cols < cols) {
      throw new LlmError(
        'invalid-request',
        `storing KV of layer ${layer}: k/v rows of ${k.cols}/${v.cols} values are narrower than the layer's ${cols}`,
      );
    }
    const rowBytes = kvRowBytes(this.kvType, cols);
    const rot = kvRotations(this.kvType, spec.layers[layer].headDim);
    for (let i = 0; i < n; i++) {
      const at = (startPos + i) * rowBytes;
      const kRow = buf(k).slice(i * k.cols, i * k.cols + cols); // [cols], rotated as llama.cpp stores it
      const vRow = buf(v).slice(i * v.cols, i * v.cols + cols);
      hadamardRows(kRow, rot.k);
      hadamardRows(vRow, rot.v);
      encodeKvRow(this.kvType, kRow, cache.k.subarray(at, at + rowBytes));
      encodeKvRow(this.kvType, vRow, cache.v.subarray(at, at + rowBytes));
    }
  }

  attention(out: Activation, q: Activation, layer: number, n: number, params: AttentionParams): void {
    const spec = this.requireKv();
    checkAttentionGeometry(spec, layer, params);
    const { startPos } = this.step();
    const cache = this.layerKv(layer);
    const type = this.kvType;
    const cols = kvLayerCols(spec, layer);
    const sinks = params.sinks ? (params.sinks as CpuWeight).data : null; // [nHeads]
    if (type === 'f32') {
      const f32 = (b: Uint8Array): Float32Array => new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4);
      attentionRows(buf(out), buf(q), { k: f32(cache.k), v: f32(cache.v) }, n, startPos, params, sinks);
      return;
    }
    // Dequantized K and V of positions 0 … startPos+n−1, and q as llama.cpp multiplies it by such keys.
    const ctx = startPos + n;
    const rowBytes = kvRowBytes(type, cols);
    const kv: KvLayer = { k: new Float32Array(ctx * cols), v: new Float32Array(ctx * cols) }; // [ctx, cols] each
    for (let p = 0; p < ctx; p++) {
      decodeKvRow(type, cache.k.subarray(p * rowBytes), kv.k.subarray(p * cols, (p + 1) * cols));
      decodeKvRow(type, cache.v.subarray(p * rowBytes), kv.v.subarray(p * cols, (p + 1) * cols));
    }
    const rot = kvRotations(type, params.headDim);
    const qRounded = buf(q).slice(0, n * q.cols); // [n, nHeads·headDim]
    hadamardRows(qRounded, rot.k);
    roundQueryForKv(type, qRounded);
    attentionRows(buf(out), qRounded, kv, n, startPos, params, sinks);
    hadamardRows(buf(out).subarray(0, n * out.cols), rot.v); // back from the rotated V basis
  }

  glu(out: Activation, gate: Activation, up: Activation, n: number, act: GluActivation): void {
    const o = buf(out);
    const g = buf(gate);
    const u = buf(up);
    const len = n * out.cols;
    for (let i = 0; i < len; i++) {
      const x = g[i];
      // SiLU: x·σ(x). GELU: llama.cpp's tanh approximation 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
      const a =
        act === 'silu' ? x / (1 + Math.exp(-x)) : 0.5 * x * (1 + Math.tanh(GELU_COEF * x * (1 + 0.044715 * x * x)));
      o[i] = a * u[i];
    }
  }

  moeRoute(ids: Activation, weights: Activation, logits: Activation, n: number, params: MoeRouteParams): void {
    const probs = new Float32Array(logits.cols); // [nExperts] (the reference allocates freely)
    for (let t = 0; t < n; t++) {
      const rows = {
        logits: buf(logits),
        logitsAt: t * logits.cols,
        ids: buf(ids),
        idsAt: t * ids.cols,
        weights: buf(weights),
        weightsAt: t * weights.cols,
      };
      const bias = params.selectionBias ? (params.selectionBias as CpuWeight).data : null; // [nExperts]
      const scale = params.expertScale ? (params.expertScale as CpuWeight).data : null; // [nExperts]
      routeToken(rows, logits.cols, ids.cols, params, probs, bias, 0, scale);
    }
  }

  matmulExperts(
    out: Activation,
    x: Activation,
    w: Weight,
    nExperts: number,
    ids: Activation,
    n: number,
    xPerSlot: boolean,
  ): void {
    const nUsed = ids.cols;
    const rows = w.nRows / nExperts; // rows of one expert
    const k = w.rowLength;
    if (x.cols !== k || out.cols !== rows || n * nUsed > out.maxRows || !Number.isInteger(rows)) {
      throw new LlmError(
        'invalid-request',
        `cpu matmulExperts ${w.name}: x ${x.label} [${n}, ${x.cols}] · ${nExperts} experts of [${rows}, ${k}] does not fit out ${out.label} [${out.maxRows}, ${out.cols}]`,
      );
    }
    const o = buf(out);
    const src = buf(x);
    const wd = (w as CpuWeight).data; // [nExperts·rows, k]
    const sel = buf(ids);
    for (let t = 0; t < n; t++) {
      for (let s = 0; s < nUsed; s++) {
        const e = sel[t * nUsed + s];
        const xBase = (xPerSlot ? t * nUsed + s : t) * x.cols;
        const oBase = (t * nUsed + s) * out.cols;
        for (let r = 0; r < rows; r++) {
          const wBase = (e * rows + r) * k;
          let acc = 0;
          for (let j = 0; j < k; j++) acc += src[xBase + j] * wd[wBase + j];
          o[oBase + r] = acc;
        }
      }
    }
  }

  moeCombine(out: Activation, y: Activation, weights: Activation, n: number): void {
    const o = buf(out);
    const src = buf(y);
    const wt = buf(weights);
    const nUsed = weights.cols;
    const cols = y.cols;
    for (let t = 0; t < n; t++) {
      for (let j = 0; j < cols; j++) {
        let acc = 0;
        for (let s = 0; s < nUsed; s++) acc += wt[t * nUsed + s] * src[(t * nUsed + s) * cols + j];
        o[t * out.cols + j] = acc;
      }
    }
  }

  sigmoidGatedAdd(out: Activation, y: Activation, gate: Activation, n: number): void {
    const o = buf(out);
    const src = buf(y);
    for (let t = 0; t < n; t++) {
      const g = 1 / (1 + Math.exp(-buf(gate)[t * gate.cols]));
      for (let j = 0; j < out.cols; j++) o[t * out.cols + j] += g * src[t * y.cols + j];
    }
  }

  add(out: Activation, a: Activation, b: Activation, n: number): void {
    const o = buf(out);
    const x = buf(a);
    const y = buf(b);
    const len = n * out.cols;
    for (let i = 0; i < len; i++) o[i] = x[i] + y[i];
  }

  scale(x: Activation, s: number, n: number): void {
    const d = buf(x);
    const len = n * x.cols;
    for (let i = 0; i < len; i++) d[i] *= s;
  }

  softcap(x: Activation, cap: number, n: number): void {
    const d = buf(x);
    const len = n * x.cols;
    for (let i = 0; i < len; i++) d[i] = cap * Math.tanh(d[i] / cap);
  }

  copyRows(out: Activation, x: Activation, srcRow: number, n: number, dstRow = 0): void {
    if (buf(out) === buf(x)) buf(out).copyWithin(dstRow * x.cols, srcRow * x.cols, (srcRow + n) * x.cols);
    else buf(out).set(buf(x).subarray(srcRow * x.cols, (srcRow + n) * x.cols), dstRow * out.cols);
  }

  endStep(): void {
    this.batch = null;
  }

  async read(x: Activation, n: number): Promise<Float32Array> {
    return buf(x).slice(0, n * x.cols);
  }

  async argmax(x: Activation, row: number): Promise<number> {
    const d = buf(x);
    const base = row * x.cols;
    let best = 0;
    for (let j = 1; j < x.cols; j++) if (d[base + j] > d[base + best]) best = j;
    return best;
  }

  async topK(x: Activation, row: number, k: number): Promise<TopK> {
    return topKScan(buf(x).subarray(row * x.cols, (row + 1) * x.cols), k);
  }

  protected readonly view: HostView = (t) => [(t as CpuWeight | CpuActivation).data, 0]; // both f32

  copyKv(srcSlot: number, dstSlot: number, nPositions: number): void {
    const spec = this.requireKv();
    for (const s of [srcSlot, dstSlot]) {
      if (!(s >= 0 && s < spec.nSlots)) {
        throw new LlmError('invalid-request', `copying KV: slot ${s} does not exist (${spec.nSlots} slots)`);
      }
    }
    for (let l = 0; l < spec.layers.length; l++) {
      const bytes = nPositions * kvRowBytes(this.kvType, kvLayerCols(spec, l));
      const src = this.kv[srcSlot][l];
      const dst = this.kv[dstSlot][l];
      dst.k.set(src.k.subarray(0, bytes));
      dst.v.set(src.v.subarray(0, bytes));
    }
  }

  async shiftKv(slot: number, shift: KvShift): Promise<void> {
    const spec = this.requireKv();
    checkKvShift(spec, slot, shift);
    shiftKvBytes(spec, this.kvType, (l) => this.kv[slot][l], shift);
  }

  async readKv(slot: number, nPositions: number): Promise<KvRows> {
    return readKvBytes('readKv', this.requireKv(), slot, nPositions, this.kvType, (l) => this.kv[slot][l]);
  }

  async writeKv(slot: number, rows: KvRows): Promise<void> {
    writeKvBytes('writeKv', this.requireKv(), slot, rows, this.kvType, (l) => this.kv[slot][l]);
  }

  destroy(): void {
    this.kv = [];
    this.kvSpec = null;
    this.batch = null;
  }

  protected step(): StepBatch {
    if (!this.batch) throw new LlmError('invalid-request', 'cpu ops: an op was issued outside beginStep … endStep');
    return this.batch;
  }

  private requireKv(): KvCacheSpec {
    if (!this.kvSpec) throw new LlmError('invalid-request', 'cpu ops: the KV cache was used before createKvCache');
    return this.kvSpec;
  }

  private layerKv(layer: number): KvBytes {
    const spec = this.requireKv();
    const { slot } = this.step();
    if (!(layer >= 0 && layer < spec.layers.length)) {
      throw new LlmError('invalid-request', `cpu ops: KV layer ${layer} does not exist (${spec.layers.length} layers)`);
    }
    if (!(slot >= 0 && slot < spec.nSlots)) {
      throw new LlmError('invalid-request', `cpu ops: slot ${slot} does not exist (${spec.nSlots} slots)`, {
        details: { slot, nSlots: spec.nSlots },
      });
    }
    return this.kv[slot][layer];
  }
}

/** The f32 storage behind an activation of this backend. */
function buf(a: Activation): Float32Array {
  return (a as CpuActivation).data;
}

/** Creates the plain-TypeScript reference backend. */
export function createCpuOps(): Ops {
  return new CpuOps();
}
