/**
 * The random tensor data of the synthetic models: deterministic per (seed, tensor name), Gaussian values, quantized
 * with the type's reference `quantizeRow` (big tensors tiled from a pool of quantized random blocks), or random codes
 * for the types webgguf only reads.
 */

import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType, tensorByteLength } from '../../src/quant/index.js';
import type { TensorPlan } from './arch-plan.js';
import { randomCodeBytes } from './random-codes.js';

/** A seed per (model seed, tensor name): FNV-1a of the name from the seed. */
export function hashSeed(seed: number, name: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** Fills `out` with N(mean, std²) samples (Box–Muller, two per draw). */
export function fillGaussian(out: Float32Array, rnd: () => number, mean: number, std: number): void {
  for (let i = 0; i < out.length; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - rnd()));
    const th = 2 * Math.PI * rnd();
    out[i] = mean + std * r * Math.cos(th);
    if (i + 1 < out.length) out[i + 1] = mean + std * r * Math.sin(th);
  }
}

/** Quantized bytes of one tensor; big quantized tensors are tiled from a pool of quantized random blocks. */
export function tensorBytes(
  p: TensorPlan,
  type: GgmlType,
  values: () => Float32Array,
  rnd: () => number,
  poolThreshold: number,
): Uint8Array {
  const qt = getQuantType(type);
  const n = p.shape.reduce((a, b) => a * b, 1);
  const bytes = new Uint8Array(tensorByteLength(type, p.shape)); // (n / blockElements · blockBytes)
  const isFloat = type === GgmlType.F32 || type === GgmlType.F16 || type === GgmlType.BF16;
  if (qt.quantizeRow === undefined) return randomCodeBytes(type, n, p.std, rnd);
  if (n <= poolThreshold || isFloat) {
    const rows = p.shape.slice(1).reduce((a, b) => a * b, 1);
    const rowLen = p.shape[0]!;
    const chunkRows = Math.max(1, Math.floor((1 << 20) / rowLen));
    const all = n <= poolThreshold ? values() : undefined;
    const rowBytes = (rowLen / qt.blockElements) * qt.blockBytes;
    const buf = new Float32Array(chunkRows * rowLen);
    for (let r = 0; r < rows; r += chunkRows) {
      const nr = Math.min(chunkRows, rows - r);
      const src = all !== undefined ? all.subarray(r * rowLen, (r + nr) * rowLen) : buf.subarray(0, nr * rowLen);
      if (all === undefined) fillGaussian(src, rnd, 0, p.std);
      qt.quantizeRow!(src, bytes.subarray(r * rowBytes, (r + nr) * rowBytes));
    }
    return bytes;
  }
  const poolBlocks = Math.max(1, Math.floor((1 << 18) / qt.blockElements));
  const poolValues = new Float32Array(poolBlocks * qt.blockElements);
  fillGaussian(poolValues, rnd, 0, p.std);
  const pool = new Uint8Array(poolBlocks * qt.blockBytes);
  qt.quantizeRow!(poolValues, pool);
  const nBlocks = n / qt.blockElements;
  for (let b = 0; b < nBlocks; b++) {
    const k = Math.floor(rnd() * poolBlocks);
    bytes.set(pool.subarray(k * qt.blockBytes, (k + 1) * qt.blockBytes), b * qt.blockBytes);
  }
  return bytes;
}
