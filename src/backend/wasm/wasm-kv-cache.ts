/**
 * The WASM backend's KV cache: per slot and layer, K and V rows in one heap region, stored as the cache's KV type,
 * which the attention kernels read in place (f32: attention.ts; f16 / Q8_0 / Q4_0: attention-kv.ts, with q rounded
 * or quantized as llama.cpp multiplies it by such keys — see `kv-type.ts`).
 */

import { LlmError } from '../../errors.js';
import { kvLayerCols, readKvBytes, writeKvBytes } from '../kv-rows.js';
import { checkKvShift, type KvShift, shiftKvBytes } from '../kv-shift.js';
import {
  checkKvType,
  encodeKvRow,
  hadamardRows,
  type KvType,
  kvRotations,
  kvRowBytes,
  roundQueryForKv,
} from '../kv-type.js';
import type { KvCacheSpec, KvRows } from '../ops.js';
import type { KernelExports } from './kernel-exports.js';
import type { WasmHeap } from './wasm-heap.js';

/** The kernels an f16 cache converts with (wasm/assembly/kv-f16-rows.ts); absent from an older kernel build. */
type F16Kernels = Partial<Pick<KernelExports, 'f16_store_rows' | 'f16_round'>>;

/** Byte offsets of one layer's K and V of one slot: [contextLength, kvRowBytes] each. */
interface KvOffsets {
  readonly k: number;
  readonly v: number;
}

/** What the attention kernel reads for one layer: K and V rows indexed by position, and q rows. */
export interface KvAttentionInputs {
  /** Byte offset of position 0's K row ([contextLength, kvRowBytes] as the cache's type). */
  readonly k: number;
  readonly v: number;
  /** Byte offset of q (the f32 activation itself, or its rounded / quantized copy; see `attentionInputs`). */
  readonly q: number;
  /** The kernel's KV kind: 0 f32 (attention_heads), 1 f16, 2 q8_0, 3 q4_0 (attention_kv_heads). */
  readonly kind: number;
}

/** KV kind codes of wasm/assembly/attention-kv.ts by cache type (0: the f32 kernel). */
const KV_KINDS: Readonly<Record<KvType, number>> = { f32: 0, f16: 1, q8_0: 2, q4_0: 3 };

const ALIGN = 64;
const up = (bytes: number): number => Math.ceil(bytes / ALIGN) * ALIGN;

/** See the file header. */
export class WasmKvCache {
  readonly spec: KvCacheSpec;
  readonly type: KvType;
  private readonly kv: KvOffsets[][] = []; // [nSlots][nLayers]
  private qScratch = { byteOffset: 0, byteLength: 0 }; // rounded / quantized q of one attention call
  private row = new Float32Array(0); // one K or V row being rotated before it is stored, or q being prepared
  /** What `attentionInputs` returns, refilled per call (attention runs per layer per token: no object per call). */
  private readonly inputs = { k: 0, v: 0, q: 0, kind: 0 };
  /** The heap region holding the cache (the next cache reuses it when it fits). */
  readonly region: { byteOffset: number; byteLength: number };

  /**
   * Places the cache in `previous` (a former cache's region) when it fits, zeroing what it uses, else in a new one.
   * `kernels`: the f16 conversions in WASM (else, or in an older kernel build, in JavaScript: the same values).
   */
  constructor(
    private readonly heap: WasmHeap,
    spec: KvCacheSpec,
    previous: { byteOffset: number; byteLength: number },
    private readonly kernels: F16Kernels = {},
  ) {
    const type = spec.kvType ?? 'f32';
    checkKvType(type, spec.layers);
    this.spec = spec;
    this.type = type;
    const layerBytes = spec.layers.map((_, l) => up(spec.contextLength * kvRowBytes(type, kvLayerCols(spec, l))));
    const total = 2 * spec.nSlots * layerBytes.reduce((a, b) => a + b, 0);
    if (total > previous.byteLength) {
      this.region = heap.alloc(
        total,
        `KV cache (${spec.nSlots} slots × ${spec.layers.length} layers × ${spec.contextLength} positions, ${type})`,
      );
    } else {
      this.region = previous;
      heap.u8.fill(0, previous.byteOffset, previous.byteOffset + total);
    }
    let at = this.region.byteOffset;
    for (let s = 0; s < spec.nSlots; s++) {
      const layers: KvOffsets[] = [];
      for (const bytes of layerBytes) {
        layers.push({ k: at, v: at + bytes });
        at += 2 * bytes;
      }
      this.kv.push(layers);
    }
  }

  /** Layer `layer` of `slot`, checked. */
  private at(slot: number, layer: number): KvOffsets {
    const nLayers = this.spec.layers.length;
    if (!(slot >= 0 && slot < this.spec.nSlots) || !(layer >= 0 && layer < nLayers)) {
      throw new LlmError(
        'invalid-request',
        `wasm ops: slot ${slot} / layer ${layer} does not exist (${this.spec.nSlots} slots, ${nLayers} layers)`,
        { details: { slot, layer, nSlots: this.spec.nSlots, nLayers } },
      );
    }
    return this.kv[slot][layer];
  }

  /** Stores rows [0, n) of k and v (f32 at byte offsets, `stride` values apart) at positions startPos … of slot. */
  store(slot: number, layer: number, k: number, v: number, stride: number, n: number, startPos: number): void {
    const cache = this.at(slot, layer);
    const cols = kvLayerCols(this.spec, layer);
    const rowBytes = kvRowBytes(this.type, cols);
    const rot = kvRotations(this.type, this.spec.layers[layer].headDim);
    const toF16 = this.kernels.f16_store_rows;
    if (this.type === 'f16' && typeof toF16 === 'function') {
      // f16 rows (never rotated) converted in WASM: rows [0, n) at `stride` values apart into rows of `cols`.
      toF16(0, k, cache.k + startPos * rowBytes, cols, 0, n, stride, cols);
      toF16(0, v, cache.v + startPos * rowBytes, cols, 0, n, stride, cols);
      return;
    }
    const u8 = this.heap.u8;
    if (this.type === 'f32') {
      // f32 rows (never rotated) as bytes within the heap, no views per row: one copy when the rows are contiguous.
      const bytes = cols * 4;
      if (stride === cols) {
        u8.copyWithin(cache.k + startPos * rowBytes, k, k + n * bytes);
        u8.copyWithin(cache.v + startPos * rowBytes, v, v + n * bytes);
        return;
      }
      for (let i = 0; i < n; i++) {
        const dst = (startPos + i) * rowBytes;
        const src = i * stride * 4;
        u8.copyWithin(cache.k + dst, k + src, k + src + bytes);
        u8.copyWithin(cache.v + dst, v + src, v + src + bytes);
      }
      return;
    }
    const f32 = this.heap.f32;
    for (let i = 0; i < n; i++) {
      const dst = (startPos + i) * rowBytes;
      for (const [src, base, size] of [
        [k, cache.k, rot.k],
        [v, cache.v, rot.v],
      ]) {
        let row = f32.subarray((src >>> 2) + i * stride, (src >>> 2) + i * stride + cols);
        if (size > 0) {
          const copy = this.rowScratch(cols); // rotated copy, as llama.cpp stores it
          copy.set(row);
          hadamardRows(copy, size);
          row = copy;
        }
        encodeKvRow(this.type, row, u8.subarray(base + dst, base + dst + rowBytes));
      }
    }
  }

  /**
   * The inputs of attention on `layer` of `slot` for q rows [0, n) (q: byte offset of f32 [n, qCols]): the cache's K
   * and V rows in place, and q as the kernel for the cache's type multiplies keys by it — f32 as it is; f16: rounded
   * to f16 (f32 [n, qCols]); q8_0 / q4_0: rotated like the stored keys, then quantized to Q8_0 blocks
   * (block_q8_0 [n, qCols / 32]), as llama.cpp converts q to K's `vec_dot_type`.
   */
  attentionInputs(slot: number, layer: number, q: number, qCols: number, n: number): KvAttentionInputs {
    const cache = this.at(slot, layer);
    const kind = KV_KINDS[this.type];
    if (kind === 0) return this.fill(cache.k, cache.v, q, kind);
    const bytes = kind === 1 ? n * qCols * 4 : kvRowBytes('q8_0', n * qCols);
    if (bytes > this.qScratch.byteLength) {
      this.qScratch = this.heap.alloc(Math.max(bytes, 2 * this.qScratch.byteLength), 'attention q scratch');
    }
    const at = this.qScratch.byteOffset;
    const round = this.kernels.f16_round;
    if (kind === 1 && typeof round === 'function') {
      round(q, at, n * qCols); // q rounded to f16 in WASM (f32 [n, qCols])
      return this.fill(cache.k, cache.v, at, kind);
    }
    const qRows = this.rowScratch(n * qCols);
    qRows.set(this.heap.f32.subarray(q >>> 2, (q >>> 2) + n * qCols));
    if (kind === 1) {
      roundQueryForKv('f16', qRows);
      this.heap.f32.set(qRows, at >>> 2);
    } else {
      hadamardRows(qRows, kvRotations(this.type, this.spec.layers[layer].headDim).k);
      encodeKvRow('q8_0', qRows, this.heap.u8.subarray(at, at + bytes));
    }
    return this.fill(cache.k, cache.v, at, kind);
  }

  private fill(k: number, v: number, q: number, kind: number): KvAttentionInputs {
    const r = this.inputs;
    r.k = k;
    r.v = v;
    r.q = q;
    r.kind = kind;
    return r;
  }

  /** Rotates attention's output rows [0, n) (f32 at byte offset `out`, `cols` wide) back from a rotated V basis. */
  finishAttention(layer: number, out: number, cols: number, n: number): void {
    const size = kvRotations(this.type, this.spec.layers[layer].headDim).v;
    if (size > 0) hadamardRows(this.heap.f32.subarray(out >>> 2, (out >>> 2) + n * cols), size);
  }

  /** A reusable f32 row of `cols` values. */
  private rowScratch(cols: number): Float32Array {
    if (this.row.length < cols) this.row = new Float32Array(cols);
    return this.row.subarray(0, cols);
  }

  /** Copies positions [0, nPositions) of every layer from one slot to another. */
  copy(srcSlot: number, dstSlot: number, nPositions: number): void {
    for (const s of [srcSlot, dstSlot]) {
      if (!(s >= 0 && s < this.spec.nSlots)) {
        throw new LlmError('invalid-request', `copying KV: slot ${s} does not exist (${this.spec.nSlots} slots)`, {
          details: { slot: s, nSlots: this.spec.nSlots },
        });
      }
    }
    const u8 = this.heap.u8;
    for (let l = 0; l < this.spec.layers.length; l++) {
      const bytes = nPositions * kvRowBytes(this.type, kvLayerCols(this.spec, l));
      const src = this.kv[srcSlot][l];
      const dst = this.kv[dstSlot][l];
      u8.copyWithin(dst.k, src.k, src.k + bytes);
      u8.copyWithin(dst.v, src.v, src.v + bytes);
    }
  }

  /** `Ops.shiftKv`. */
  shift(slot: number, shift: KvShift): void {
    checkKvShift(this.spec, slot, shift);
    shiftKvBytes(this.spec, this.type, (l) => this.views(slot, l), shift);
  }

  /** `Ops.readKv`. */
  read(slot: number, nPositions: number): KvRows {
    return readKvBytes('readKv', this.spec, slot, nPositions, this.type, (l) => this.views(slot, l));
  }

  /** `Ops.writeKv`. */
  write(slot: number, rows: KvRows): void {
    writeKvBytes('writeKv', this.spec, slot, rows, this.type, (l) => this.views(slot, l));
  }

  /** Layer `l`'s K and V of `slot` as heap byte views ([contextLength, kvRowBytes] each). */
  private views(slot: number, l: number): { k: Uint8Array; v: Uint8Array } {
    const len = this.spec.contextLength * kvRowBytes(this.type, kvLayerCols(this.spec, l));
    const { k, v } = this.kv[slot][l];
    return { k: this.heap.u8.subarray(k, k + len), v: this.heap.u8.subarray(v, v + len) };
  }
}
