/**
 * Weights the hardware kernels read as one: a layer's Q, K and V projections (one dispatch writes q, k and v) and
 * its gate and up projections (one dispatch computes act(gate)·up). Members are uploaded into one buffer, each at
 * an offset aligned for a storage binding, so every other kernel still binds a member alone (a buffer range) and the
 * fused GEMV binds the whole buffer. Grouping is by tensor name (GGUF's `blk.N.attn_q.weight` …); members must share
 * type and row length, else each is uploaded alone.
 */

/** The kinds of groups. */
export type WeightGroupKind = 'qkv' | 'gate_up';

/** Where a tensor goes: its group's key, kind, member index and member count; null when it is not grouped. */
export interface WeightGroupSlot {
  readonly key: string;
  readonly kind: WeightGroupKind;
  readonly index: number;
  readonly size: number;
}

const QKV = /^(blk\.\d+)\.attn_(q|k|v)\.weight$/;
const GATE_UP = /^(blk\.\d+)\.ffn_(gate|up)\.weight$/;

/** The group slot of tensor `name`, or null. */
export function weightGroupOf(name: string): WeightGroupSlot | null {
  let m = QKV.exec(name);
  if (m) return { key: `${m[1]}.qkv`, kind: 'qkv', index: 'qkv'.indexOf(m[2]!), size: 3 };
  m = GATE_UP.exec(name);
  if (m) return { key: `${m[1]}.gate_up`, kind: 'gate_up', index: m[2] === 'gate' ? 0 : 1, size: 2 };
  return null;
}

/** Byte offsets of members of `sizes` bytes laid out back to back, each aligned to `align`; and the total. */
export function groupOffsets(sizes: readonly number[], align: number): { offsets: number[]; total: number } {
  const offsets: number[] = [];
  let at = 0;
  for (const s of sizes) {
    at = Math.ceil(at / align) * align;
    offsets.push(at);
    at += s;
  }
  return { offsets, total: at };
}
