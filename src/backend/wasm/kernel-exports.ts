/**
 * The typed surface of the WASM kernel module (wasm/assembly/index.ts) and which matvec serves which ggml type.
 * All matvecs share one signature so the thread pool can split any of them by rows.
 */

import type { GgmlType } from '../../gguf/types.js';
import { QUANT_TYPES } from '../../quant/index.js';
import type { Rows4Block } from './rows4-layout.js';

/**
 * out[t, r] = W[r] · x[t] for rows r0 ≤ r < r1 and tokens t < n. `w`, `x`, `out` are byte offsets in the memory;
 * x is a Q8 activation block (see wasm/assembly/q8-activations.ts) for quantized kernels and f32 [n, k] for float
 * kernels; out is f32 [n, outStride].
 */
export type GemvKernel = (
  w: number,
  x: number,
  out: number,
  k: number,
  r0: number,
  r1: number,
  n: number,
  outStride: number,
) => void;

/** The module's exports. */
export interface KernelExports {
  /** Quantizes n rows of f32 x ([n, xStride], first k columns) into Q8 activation rows at `out`. */
  quantize_q8(x: number, xStride: number, n: number, k: number, out: number): void;
  gemv_q4_0: GemvKernel;
  /** Q4_0 weights stored in 4-row groups (rows4-layout.ts) · n Q8 rows, any n (wasm/assembly/gemv-stored-rows4.ts). */
  gemv_q4_0_r4: GemvKernel;
  /** gemv_q4_0_r4 over splatted activations (splat_q8_x4), bit-identical (wasm/assembly/gemv-q4-0-tiles.ts). */
  gemv_q4_0_r4x: GemvKernel;
  /**
   * Lays out n Q8 activation rows (k elements) at x for gemv_q4_0_r4x at dst (splat-activations.ts splatBytes).
   * Absent from builds older than it (a benchmark's `--baseline` build).
   */
  splat_q8_x4?(x: number, n: number, k: number, dst: number): void;
  /** Q8_0 weights stored in 4-row groups · n Q8 rows, any n (wasm/assembly/gemv-q8-rows4.ts: u = w + 128 nibbles). */
  gemv_q8_0_r4: GemvKernel;
  /** Q4_K weights stored in 4-row groups · n Q8 rows, any n (wasm/assembly/gemv-q4-k-rows4.ts). */
  gemv_q4_k_r4: GemvKernel;
  /** Q5_0 weights stored in 4-row groups (5th bits re-ordered) · n Q8 rows, any n (wasm/assembly/gemv-q5-rows4.ts). */
  gemv_q5_0_r4: GemvKernel;
  /** Q6_K weights stored in 4-row groups (bodies re-coded) · n Q8 rows, any n (wasm/assembly/gemv-q6-k-rows4.ts). */
  gemv_q6_k_r4: GemvKernel;
  /** Q5_K weights stored in 4-row groups (bodies re-coded) · n Q8 rows, any n (wasm/assembly/gemv-q5-k-rows4.ts). */
  gemv_q5_k_r4: GemvKernel;
  /**
   * 1 when this build's 4-row kernels run (relaxed SIMD), 0 where they trap: only then are weights stored so. Absent
   * from builds older than the 4-row layout (a benchmark's `--baseline` build): row pairs.
   */
  rows4_kernels?(): number;
  gemv_q4_1: GemvKernel;
  gemv_q5_0: GemvKernel;
  gemv_q5_1: GemvKernel;
  gemv_q8_0: GemvKernel;
  gemv_q4_k: GemvKernel;
  gemv_q5_k: GemvKernel;
  gemv_q6_k: GemvKernel;
  gemv_mxfp4: GemvKernel;
  gemv_f32: GemvKernel;
  gemv_f16: GemvKernel;
  gemv_bf16: GemvKernel;
  /** F32 weights · n f32 rows in 3-row × 3-token tiles, bit-identical to gemv_f32 (wasm/assembly/gemm-float.ts). */
  gemm_f32: GemvKernel;
  /**
   * F16 weights · n f32 rows in gemm_f32's tiles, each row triple converted per block of tokens into the scratch
   * (wasm/assembly/gemm-float.ts); `w` is the address of [weights, scratch] (u32 each), bit-identical to gemv_f16.
   */
  gemm_f16: GemvKernel;
  /**
   * Two consecutive query rows of non-causal attention over every key, f32 KV, no window/soft-cap/sinks, headDim % 4
   * = 0 (attention_heads' parameters; wasm/assembly/attention-pair.ts); bit-identical to two attention_heads calls.
   */
  attention_pair_heads: GemvKernel;
  /**
   * attention_pair_heads for two rows with their own key ranges (non-causal sliding windows): the first row's first
   * and last key at bytes 68 and 72 of the parameter block, the second's first at 76 (its last in startPos).
   */
  attention_pair_window_heads: GemvKernel;
  /** attention_f32 with its 14 parameters in memory at `w` (the sinks' address at byte 56) (see wasm/assembly/attention.ts); heads r0 … r1−1. */
  attention_heads: GemvKernel;
  /**
   * attention_kv with its 15 parameters in memory at `w` (attention_heads' 13, the KV kind: 1 f16, 2 q8_0, 3 q4_0,
   * then the sinks' address; see wasm/assembly/attention-kv.ts); heads r0 … r1−1.
   */
  attention_kv_heads: GemvKernel;
  /**
   * Decode attention's positions split across threads (f32 or f16 KV, no sinks/ALiBi): attention_heads' parameters
   * plus nParts and the partial results' address (wasm/assembly/attention-split.ts); items (KV head, part) r0 … r1−1.
   */
  attention_split_heads: GemvKernel;
  /**
   * f16 rows r0 … r1−1 of `k` values at `x` widened into f32 rows at `out` (a layer's f16 K / V before a prefill
   * batch's attention, see wasm/assembly/attention-widen.ts); other arguments unused.
   */
  widen_f16_rows: GemvKernel;
  /**
   * f32 rows r0 … r1−1 of `k` values (row r at x + 4·r·n) stored as f16 (row r at out + 2·r·s), the f16 KV cache's
   * rows (wasm/assembly/kv-f16-rows.ts); the first argument unused.
   */
  f16_store_rows: GemvKernel;
  /** out[i] = x[i] rounded to f16, as f32, for i < count (q for an f16 KV cache; wasm/assembly/kv-f16-rows.ts). */
  f16_round(x: number, out: number, count: number): void;
  /**
   * Causal attention of q [n, nHeads·headDim] over f32 k/v caches [ctx, nKvHeads·headDim] into out, for heads
   * h0 ≤ h < h1; `scores` is f32 scratch [nHeads, startPos + n] (wasm/assembly/attention.ts).
   */
  attention_f32(
    out: number,
    q: number,
    k: number,
    v: number,
    scores: number,
    n: number,
    startPos: number,
    nHeads: number,
    nKvHeads: number,
    headDim: number,
    window: number,
    scale: number,
    softcap: number,
    sinks: number,
    h0: number,
    h1: number,
  ): void;
  /**
   * bert's LayerNorm over n rows of x ([n, xCols]) into out ([n, outCols]), f64 statistics, bit-identical to
   * host-encoder-ops.ts `hostLayerNorm`; w / b byte addresses of f32 [xCols], 0 for none (wasm/assembly/encoder-rows.ts).
   * Absent from builds older than it (a benchmark's `--baseline` build).
   */
  layer_norm_rows?(
    out: number,
    outCols: number,
    x: number,
    xCols: number,
    w: number,
    b: number,
    eps: number,
    n: number,
  ): void;
  /** ggml's f16-tabulated GELU over len f32 values at x, in place; `table` f32 [65536] (`geluF16Table`). */
  gelu_f16_rows?(x: number, len: number, table: number): void;
  /**
   * RMSNorm of `groups` groups of g f32 values at src into dst, w the byte address of f32 [g] or 0 for none;
   * bit-identical to row-ops.ts `rmsNormRows` (wasm/assembly/row-ops.ts). Absent from builds older than it.
   */
  rms_norm_rows?(dst: number, src: number, w: number, g: number, groups: number, eps: number): void;
  /** dst = a + b over len f32 values (wasm/assembly/row-ops.ts). Absent from builds older than it. */
  add_rows?(dst: number, a: number, b: number, len: number): void;
  /** out[t] = Σ_s w[t, s] · y[t·nUsed + s] (wasm/assembly/moe-combine.ts). Absent from builds older than it. */
  moe_combine?(out: number, y: number, w: number, cols: number, nUsed: number, n: number, outStride: number): void;
  /**
   * Rotary embedding of n rows of `cols` f32 at x in place (heads of headDim, pairs (2i, 2i+1) when `norm` is 1, else
   * (i, i + half)), cos / sin f64 [n, half] byte addresses; bit-identical to row-ops.ts `ropeRotate`
   * (wasm/assembly/rope.ts). Absent from builds older than it.
   */
  rope_rows?(
    x: number,
    cols: number,
    n: number,
    headDim: number,
    half: number,
    norm: number,
    cos: number,
    sin: number,
  ): void;
  /** out = act(gate) · up over len f32 values; act 0 = SiLU, 1 = GELU (tanh approx.), 2 = gpt-oss's clamped SwiGLU. */
  glu_f32(out: number, gate: number, up: number, len: number, act: number): void;
  /**
   * Rearranges nRows GGUF-layout rows at `w` into the row-pair layout in place (row-pairs.ts), through `scratch`
   * (2·rowBytes bytes); an odd count needs rowBytes more bytes reserved after the last row.
   */
  interleave_row_pairs(w: number, nRows: number, rowBytes: number, blockBytes: number, scratch: number): void;
  /**
   * Rearranges nRows GGUF-layout rows at `w` (blocks of `head` f16 fields, 32-bit body words, `tail` f16 fields) into
   * 4-row groups in place
   * (wasm/assembly/rows4-layout.ts), through `scratch` (4·rowBytes bytes); a count off a multiple of 4 needs the
   * group's missing rows reserved after the last row; `flip` (0 or 0x80) is XORed into every quant byte; `recode`
   * 1 (Q5_0), 2 (Q6_K) or 3 (Q5_K) re-codes each block's body first (rows4-layout.ts); `check` 1 tests every head and
   * tail f16 field for Inf/NaN on the way and returns the GGUF-order index (row · blocks per row + block) of the first
   * block holding one, else (and with `check` 0, or a kernel build before the check) -1 or undefined.
   */
  interleave_rows4(
    w: number,
    nRows: number,
    rowBytes: number,
    blockBytes: number,
    head: number,
    tail: number,
    scratch: number,
    flip: number,
    recode: number,
    check?: number,
  ): number | undefined;
  /** Index of the largest of n f32 values at x: first on ties, NaN never wins (wasm/assembly/argmax.ts). */
  argmax_f32(x: number, n: number): number;
  /** The k largest of n f32 values at x as indices written to `ids`, highest first (ties: lower index first). */
  topk_f32(x: number, n: number, k: number, ids: number): number;
  /**
   * The gated delta rule over n tokens, heads r0 … r1−1, its 13 parameters in memory at `w`
   * (wasm/assembly/delta-net-scan.ts).
   */
  delta_net_heads: GemvKernel;
  /** Mamba-2's selective scan likewise, its 15 parameters at `w` (wasm/assembly/mamba2-scan.ts). */
  mamba2_heads: GemvKernel;
  /** Causal depthwise conv1d + bias + SiLU over [state ‖ x], the window slid (wasm/assembly/recurrent-conv.ts). */
  conv_silu?(
    state: number,
    x: number,
    xStride: number,
    kernel: number,
    bias: number,
    out: number,
    outStride: number,
    n: number,
    channels: number,
    taps: number,
  ): void;
  /** lfm2's short gated convolution over [state ‖ B·x], times C, the window slid (wasm/assembly/short-conv.ts). */
  short_conv?(
    state: number,
    bcx: number,
    bcxStride: number,
    kernel: number,
    out: number,
    outStride: number,
    n: number,
    channels: number,
    taps: number,
  ): void;
  /** x[t, h·headDim …] /= sqrt(Σx² + eps) in place (wasm/assembly/recurrent-conv.ts). */
  l2norm_heads?(x: number, stride: number, n: number, nHeads: number, headDim: number, eps: number): void;
  /** DeltaNet's gated RMSNorm per value head, in place (wasm/assembly/recurrent-conv.ts). */
  gated_norm_heads?(
    out: number,
    outStride: number,
    z: number,
    zStride: number,
    norm: number,
    n: number,
    nHeads: number,
    headV: number,
    eps: number,
  ): void;
}

/**
 * Names of the row-splittable kernels, in a fixed order (their index is what crosses to helper threads).
 * `attention_heads` takes the matvec signature too, splitting heads instead of rows.
 */
export const GEMV_NAMES = [
  'gemv_q4_0',
  'gemv_q4_1',
  'gemv_q5_0',
  'gemv_q5_1',
  'gemv_q8_0',
  'gemv_q4_k',
  'gemv_q5_k',
  'gemv_q6_k',
  'gemv_mxfp4',
  'gemv_f32',
  'gemv_f16',
  'gemv_bf16',
  'attention_heads',
  'attention_kv_heads',
  'attention_split_heads',
  'gemv_q4_0_r4',
  'gemv_q4_0_r4x',
  'gemv_q8_0_r4',
  'gemv_q4_k_r4',
  'gemv_q5_0_r4',
  'gemv_q6_k_r4',
  'gemv_q5_k_r4',
  'delta_net_heads',
  'mamba2_heads',
  'gemm_f32',
  'gemm_f16',
  'widen_f16_rows',
] as const;

/** One kernel name. */
export type GemvName = (typeof GEMV_NAMES)[number];

/** How a weight type is multiplied: a fused kernel and whether it takes Q8 (true) or f32 (false) activations. */
export interface FusedKernel {
  readonly name: GemvName;
  readonly isQ8: boolean;
  /** Row lengths must be a multiple of this (the kernel's block size). */
  readonly blockElements: number;
  /** The kernel for weights stored in 4-row groups (relaxed-SIMD builds; registry `wasm.rows4`), or null. */
  readonly rows4: GemvName | null;
  /** The block shape that kernel's layout is made from (rows4-layout.ts), or null. */
  readonly rows4Block: Rows4Block | null;
}

/**
 * The fused kernels by weight type, derived from the quant registry (`QuantType.wasm`); types whose path is
 * 'dequantize' are dequantized row-chunk by row-chunk then use gemv_f32.
 * @throws Error at module load when a registry entry names a kernel missing from GEMV_NAMES (a programming error).
 */
export const FUSED_KERNELS: ReadonlyMap<GgmlType, FusedKernel> = new Map<GgmlType, FusedKernel>(
  QUANT_TYPES.flatMap((t): [GgmlType, FusedKernel][] => {
    if (t.wasm === 'dequantize') return [];
    const name = t.wasm.kernel;
    if (!isGemvName(name)) throw new Error(`quant type ${t.name}: WASM kernel ${name} is not listed in GEMV_NAMES`);
    const r4 = t.wasm.rows4;
    if (r4 && !isGemvName(r4.kernel))
      throw new Error(`quant type ${t.name}: WASM kernel ${r4.kernel} is not listed in GEMV_NAMES`);
    const rows4 = r4 && isGemvName(r4.kernel) ? r4.kernel : null;
    const rows4Block: Rows4Block | null = r4
      ? {
          blockBytes: t.blockBytes,
          head: r4.head,
          tail: r4.tail,
          flip: r4.signFlip ? 0x80 : 0,
          recode: r4.recode === 'q5_0' ? 1 : r4.recode === 'q6_k' ? 2 : r4.recode === 'q5_k' ? 3 : 0,
        }
      : null;
    return [[t.id, { name, isQ8: t.wasm.activations === 'q8', blockElements: t.blockElements, rows4, rows4Block }]];
  }),
);

function isGemvName(name: string): name is GemvName {
  return (GEMV_NAMES as readonly string[]).includes(name);
}

/** Bytes of one Q8 activation row of k elements (k % 32 == 0): qs k + d k/8 + s k/8 + isum16 k/4. */
export function q8RowBytes(k: number): number {
  return k + (k >> 2) + (k >> 2);
}
