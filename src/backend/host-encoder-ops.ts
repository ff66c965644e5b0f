/**
 * The row ops encoders add (bert's LayerNorm with bias and its un-gated GELU), on the host backends (cpu, wasm) as
 * plain TypeScript over the values `view` locates: both are O(rows·cols) beside the O(rows·cols²) matrix products,
 * so one f64-accumulating implementation serves both backends. Reference: ggml_norm (+ ggml_mul, ggml_add), ggml_gelu
 * (with the CPU backend's f16 table: the conformance yardstick is llama.cpp's CPU backend, and over a few layers the
 * table's rounding moves embeddings by ~1e-3, the tolerance itself).
 */

import type { HostView } from './delta-net.js';
import { f16ToF32BitsTable, f32ToF16Bits, roundToF16 } from '../quant/half.js';
import type { Activation, Weight } from './ops.js';

/** √(2/π), the constant of the tanh approximation of GELU. */
const GELU_COEF = Math.sqrt(2 / Math.PI);

/** `Ops.layerNorm` on a host backend: mean and variance per row in f64, then · weight + bias. */
export function hostLayerNorm(
  view: HostView,
  out: Activation,
  x: Activation,
  weight: Weight | null,
  bias: Weight | null,
  eps: number,
  n: number,
): void {
  const [od, oAt] = view(out);
  const [xd, xAt] = view(x);
  const [wd, wAt] = weight ? view(weight) : [null, 0];
  const [bd, bAt] = bias ? view(bias) : [null, 0];
  const cols = x.cols;
  for (let r = 0; r < n; r++) {
    const xi = xAt + r * cols;
    const oi = oAt + r * out.cols;
    let sum = 0;
    for (let j = 0; j < cols; j++) sum += xd[xi + j]!;
    const mean = sum / cols;
    let ss = 0;
    for (let j = 0; j < cols; j++) {
      const d = xd[xi + j]! - mean;
      ss += d * d;
    }
    const inv = 1 / Math.sqrt(ss / cols + eps);
    for (let j = 0; j < cols; j++) {
      const v = (xd[xi + j]! - mean) * inv;
      od[oi + j] = v * (wd ? wd[wAt + j]! : 1) + (bd ? bd[bAt + j]! : 0);
    }
  }
}

/** ggml's `ggml_table_gelu_f16`: GELU of every f16 value, rounded to f16 ([65536], built on first use). */
let geluTable: Float32Array | null = null;

/** ggml's f16 GELU table (see above): the host loop's, and the one the WASM kernel reads (copied into its memory). */
export function geluF16Table(): Float32Array {
  if (geluTable) return geluTable;
  const inputs = new Float32Array(f16ToF32BitsTable().buffer.slice(0)); // [65536] the f16 values
  geluTable = new Float32Array(65536);
  for (let h = 0; h < 65536; h++) {
    const v = inputs[h]!;
    geluTable[h] = roundToF16(0.5 * v * (1 + Math.tanh(GELU_COEF * v * (1 + 0.044715 * v * v))));
  }
  return geluTable;
}

/**
 * `Ops.gelu` on a host backend, in place: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) as llama.cpp's CPU backend
 * computes it (GGML_GELU_FP16: x rounded to f16 indexes a table of f16 results; 0 below −10, x above 10).
 */
export function hostGelu(view: HostView, x: Activation, n: number): void {
  const [xd, at] = view(x);
  const bits = new Uint32Array(xd.buffer, xd.byteOffset, xd.length); // the same values as raw f32 bits
  const table = geluF16Table();
  for (let i = at; i < at + n * x.cols; i++) {
    const v = xd[i]!;
    if (v <= -10) xd[i] = 0;
    if (v <= -10 || v >= 10) continue;
    const u = bits[i]!;
    const e = ((u >>> 23) & 0xff) - 112; // f16 biased exponent
    let h: number;
    if (e <= 0)
      h = f32ToF16Bits(v); // f16 subnormals and zero: the general conversion
    else {
      h = ((u >>> 16) & 0x8000) | (e << 10) | ((u >>> 13) & 0x3ff);
      const rem = u & 0x1fff;
      if (rem > 0x1000 || (rem === 0x1000 && (h & 1) === 1)) h++; // round to nearest even
    }
    xd[i] = table[h]!;
  }
}
