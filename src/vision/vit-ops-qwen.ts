/**
 * The Qwen-VL encoders on a backend (`vit-ops.ts`), the same pass as the plain-TS oracles `projector-qwen25vl.ts` and
 * `projector-qwen3vl.ts` (llama.cpp `clip_graph_qwen2vl` / `clip_graph_qwen3vl`):
 *   the picture's im2col rows permuted on the host into 2×2-block order (raster order of blocks, raster inside), the
 *   blocks regrouped window by window when the file has `clip.vision.n_wa_pattern` (mtmd's `inv_window_idx`), then one
 *   GEMM by the two temporal kernels summed (`vit-weights.ts`) (+ bias) (+ qwen3vl's position table resized to the
 *   grid on the host, in the same order) → pre-norm where present →
 *   per block [RMSNorm (2.5) / LayerNorm (3) → q, k, v (+bias; qwen3vl's fused QKV split at load) → the vision rope as
 *   a multi-stream rope (pairs (i, i + hd/2), the first hd/4 by the patch's row, the next by its column) → non-causal attention
 *   over every patch on each `n_wa_pattern`-th block (all blocks without a pattern), else over each window's rows as
 *   a sequence of its own → x += Wo·att + bo → norm → SiLU(gate) × up (2.5) / GELU(up) (3) → x += down]
 *   (qwen3vl: after a deepstack block, its merger on the block's output) → post-norm →
 *   each 2×2 block's 4 rows as one [4d] row → mm.0 → GELU → mm.2 (the matrix products on the backend), rows back to
 *   raster order of the merged grid on the host; qwen3vl's row = [merger | deepstack mergers in block order].
 * Output [(gw/2) · (gh/2), nEmbdText · (1 + deepstack blocks)].
 */

import type { Activation, AttentionParams, Projection, ResidualOptions, RopeParams, Weight } from '../backend/ops.js';
import type { RopePositions } from '../backend/rope-multi.js';
import { LlmError, throwIfAborted } from '../errors.js';
import type { PreprocessedImage } from './preprocess-image.js';
import { QWEN25VL_TENSORS, windowOrder, windowTokens } from './projector-qwen25vl.js';
import { QWEN3VL_TENSORS, resizeTable } from './projector-qwen3vl.js';
import { im2colPatches } from './vit-ops.js';
import type { Gemma4vOpsContext } from './vit-ops-gemma4v.js';
import type { VitNorm } from './vit-weights.js';

/**
 * The vision rope as a backend multi-stream rope (mtmd's `ggml_rope_multi` in vision mode): pairs (i, i + hd/2),
 * the first hd/4 at the row stream (`qwenRopePositions` t), the next hd/4 at the column stream (h), frequencies
 * 10000^(−4j/hd) restarting at each section — NEOX's 10000^(−2i/hd) divided by per-pair `freqFactors`.
 */
export function qwenVisionRope(hd: number): RopeParams {
  const quarter = hd / 4;
  const freqFactors = new Float32Array(hd / 2); // (hd/2) f32: 10000^(−2i/hd) / 10000^(−4 (i mod hd/4) / hd)
  for (let i = 0; i < hd / 2; i++) freqFactors[i] = 10000 ** ((-2 * i + 4 * (i % quarter)) / hd);
  return {
    kind: 'neox',
    headDim: hd,
    nRot: hd,
    theta: 10000,
    freqScale: 1,
    freqFactors,
    multi: { sections: [quarter, quarter, 0, 0], interleaved: false },
  };
}

/** The rows' rope streams for `qwenVisionRope`: [4, n] (patch row, patch column, 0, 0). */
export function qwenRopePositions(ys: Int32Array, xs: Int32Array): RopePositions {
  const n = ys.length;
  const out = new Int32Array(4 * n); // [4, n] stream-major
  out.set(ys, 0);
  out.set(xs, n);
  return out;
}

/** Where each row of the encoder goes: its patch, the patch's grid position, and the lengths of the window runs. */
interface QwenLayout {
  /** perm[r]: the raster index of the patch at row r */
  readonly perm: Int32Array;
  readonly ys: Int32Array;
  readonly xs: Int32Array;
  /** Row counts of the consecutive windows (one run of every row without windows). */
  readonly windows: readonly number[];
  /** idx[src]: the row group (4 rows) where merged token src (raster order) sits */
  readonly idx: Int32Array;
}

/** The rows of a gw × gh patch grid in block order, blocks in window order (`gridWindow` merged tokens a side). */
export function qwenLayout(gw: number, gh: number, gridWindow: number): QwenLayout {
  const [pw, ph] = [gw / 2, gh / 2];
  const order = windowOrder(pw, ph, gridWindow);
  const n = gw * gh;
  const perm = new Int32Array(n);
  const ys = new Int32Array(n);
  const xs = new Int32Array(n);
  const windows: number[] = [];
  for (let dst = 0; dst < pw * ph; dst++) {
    const src = order.inv[dst]!;
    const [by, bx] = [Math.floor(src / pw), src % pw];
    for (let k = 0; k < 4; k++) {
      const [py, px] = [2 * by + (k >> 1), 2 * bx + (k & 1)];
      perm[4 * dst + k] = py * gw + px;
      ys[4 * dst + k] = py;
      xs[4 * dst + k] = px;
    }
    if (dst === 0 || order.win[dst] !== order.win[dst - 1]) windows.push(0);
    windows[windows.length - 1]! += 4;
  }
  return { perm, ys, xs, windows, idx: order.idx };
}

/** Rows [n, len] gathered by `perm`: out row r = src row perm[r]. */
function gatherRows(src: Float32Array, perm: Int32Array, len: number): Float32Array {
  const out = new Float32Array(perm.length * len);
  perm.forEach((from, r) => out.set(src.subarray(from * len, (from + 1) * len), r * len));
  return out;
}

/** A merger MLP's weights: [hidden rows, 4d] (+ b), [nEmbdText rows, hidden] (+ b), and an optional input LayerNorm. */
interface Merger {
  readonly up: Weight;
  readonly upB: Weight | null;
  readonly down: Weight;
  readonly downB: Weight | null;
  readonly norm: VitNorm | null;
}

/** rows [t, 4d] (each 2×2 block's 4 rows as one) → (LayerNorm →) up → GELU → down: [t, nEmbdText], on the backend. */
async function mergeRows(c: Gemma4vOpsContext, rows: Float32Array, m: Merger, label: string): Promise<Float32Array> {
  const { ops, config } = c;
  const inDim = 4 * config.nEmbd;
  const t = rows.length / inDim;
  const input = c.act(`${label}.in`, t, inDim); // [t, 4d]
  const mid = c.act(`${label}.mid`, t, m.up.nRows); // [t, hidden]
  const out = c.act(`${label}.out`, t, c.nEmbdText); // [t, nEmbdText]
  c.step(t);
  ops.setRows(input, rows, t);
  if (m.norm) ops.layerNorm(input, input, m.norm.w, m.norm.b, config.eps, t);
  ops.matmul(mid, input, m.up, t, m.upB);
  ops.gelu(mid, t);
  ops.matmul(out, mid, m.down, t, m.downB);
  ops.endStep();
  return ops.read(out, t);
}

/** qwen3vl's deepstack merger after block il, or null when the block has none. */
function deepstackMerger(c: Gemma4vOpsContext, il: number): Merger | null {
  const mm = c.w.mm;
  const name = (kind: 'dsNorm' | 'dsFc1' | 'dsFc2', part: string) =>
    `${QWEN3VL_TENSORS[kind].replace('{il}', String(il))}.${part}`;
  const up = mm[name('dsFc1', 'weight')];
  if (!up) return null;
  return {
    up,
    upB: mm[name('dsFc1', 'bias')] ?? null,
    down: mm[name('dsFc2', 'weight')]!,
    downB: mm[name('dsFc2', 'bias')] ?? null,
    norm: { w: mm[name('dsNorm', 'weight')]!, b: mm[name('dsNorm', 'bias')] ?? null },
  };
}

/** The picture's rows: [(gw/2) · (gh/2), nEmbdText · (1 + deepstack blocks)] in raster order of the merged grid. */
export async function encodeQwenVlOps(
  c: Gemma4vOpsContext,
  img: PreprocessedImage,
  signal?: AbortSignal,
): Promise<Float32Array> {
  const { ops, w, config } = c;
  const { nEmbd: d, nFf: f, nHeads, headDim: hd, eps, patchSize: p } = config;
  const rms = config.projector === 'qwen2.5vl_merger'; // Qwen2.5-VL: RMSNorm throughout; Qwen3-VL: LayerNorm
  const gw = img.size / p;
  const gh = (img.height ?? img.size) / p;
  const n = gw * gh;
  const pattern = config.windowPattern ?? 0;
  const layout = qwenLayout(gw, gh, pattern > 0 ? windowTokens(p) : Math.max(gw, gh));
  const norms = [w.preLn, w.postLn, ...w.layers.flatMap((L) => [L.ln1, L.ln2])];
  if (rms && norms.some((x) => x?.b)) {
    // `vitOpsRuns` sends such files to the TS reference; a bias on a later block only is refused here.
    throw new LlmError('unsupported-arch', `encoding the image: the ${config.projector}'s RMS norms have biases`, {
      details: { projector: config.projector },
    });
  }
  const norm = (out: Activation, src: Activation, nw: VitNorm, rows: number) =>
    rms ? ops.rmsNorm(out, src, nw.w, eps, rows) : ops.layerNorm(out, src, nw.w, nw.b, eps, rows);
  c.kv(n);
  const [x, h, scratch, q, k, v, att] = ['x', 'h', 'scratch', 'q', 'k', 'v', 'att'].map((l) => c.act(l, n, d));
  const [hidden, gate, ffn] = ['hidden', 'gate', 'ffn'].map((l) => c.act(l, n, f));
  // [longest window, d] each: a later window's rows, copied to row 0 (only with windows)
  const windowed = layout.windows.length > 1;
  const [sq, sk, sv, satt] = windowed
    ? ['win.q', 'win.k', 'win.v', 'win.att'].map((l) => c.act(l, Math.max(...layout.windows), d))
    : [q, k, v, att];
  const residual = (bias: Weight | null): ResidualOptions => ({ bias, postNorm: null, scale: 1, scratch: scratch! });
  const attention: AttentionParams = {
    nHeads,
    nKvHeads: nHeads,
    headDim: hd,
    scale: 1 / Math.sqrt(hd),
    slidingWindow: 0,
    softcap: 0,
    causal: false,
  };
  /** att = attention of each run of rows over its own rows (one KV layer, refilled per run). */
  const attend = (runs: readonly number[]) => {
    let offset = 0;
    for (const len of runs) {
      const [bq, bk, bv, batt] = offset === 0 ? [q!, k!, v!, att!] : [sq!, sk!, sv!, satt!];
      if (offset > 0)
        for (const [to, from] of [
          [sq!, q!],
          [sk!, k!],
          [sv!, v!],
        ] as const)
          ops.copyRows(to, from, offset, len);
      ops.setSequence(0, 0);
      ops.storeKv(0, bk, bv, len);
      ops.attention(batt, bq, 0, len, attention);
      if (offset > 0) ops.copyRows(att!, satt!, 0, len, offset);
      offset += len;
    }
  };

  // Patch embedding in block (and window) order, + qwen3vl's resized position table in the same order.
  const k2 = 3 * p * p;
  const patchIn = c.act('patches', n, k2); // [n, 3·p·p] im2col rows, permuted
  c.step(n);
  ops.setRows(patchIn, gatherRows(im2colPatches(img, p), layout.perm, k2), n);
  ops.matmul(x!, patchIn, w.patch, n, w.patchB);
  if (w.posHost) {
    ops.setRows(h!, gatherRows(resizeTable(w.posHost, d, gw, gh), layout.perm, d), n);
    ops.add(x!, x!, h!, n);
  }
  if (w.preLn) norm(x!, x!, w.preLn, n);
  ops.endStep();
  const rope = qwenVisionRope(hd);
  const positions = qwenRopePositions(layout.ys, layout.xs); // [4, n]
  const stacks: Float32Array[] = [];
  for (const [il, L] of w.layers.entries()) {
    throwIfAborted(signal, 'encoding the image');
    await c.yieldNow();
    throwIfAborted(signal, 'encoding the image');
    c.step(n, positions);
    norm(h!, x!, L.ln1, n);
    const qkv: Projection[] = [
      { out: q!, weight: L.q, bias: L.qB },
      { out: k!, weight: L.k, bias: L.kB },
      { out: v!, weight: L.v, bias: L.vB },
    ];
    ops.normMatmul(scratch!, h!, null, qkv, n); // q, k, v [n, d]
    ops.rope(q!, n, rope); // the vision rope at each row's patch (row, column)
    ops.rope(k!, n, rope);
    attend(pattern === 0 || (il + 1) % pattern === 0 ? [n] : layout.windows);
    ops.matmulResidual(x!, att!, L.o, n, residual(L.oB)); // x += att · Woᵀ + bo
    norm(h!, x!, L.ln2, n);
    ops.matmul(hidden!, h!, L.up, n, L.upB); // hidden [n, f]
    let act = hidden!;
    if (L.gate) {
      ops.matmul(gate!, h!, L.gate, n, L.gateB);
      c.gated(ffn!, gate!, hidden!, n);
      act = ffn!;
    } else c.activate(hidden!, n);
    ops.matmulResidual(x!, act, L.down, n, residual(L.downB)); // x += act · downᵀ + b
    ops.endStep();
    const ds = deepstackMerger(c, il);
    if (ds) stacks.push(await mergeRows(c, await ops.read(x!, n), ds, `ds${il}`));
  }
  throwIfAborted(signal, 'encoding the image');
  if (w.postLn) {
    c.step(n);
    norm(x!, x!, w.postLn, n);
    ops.endStep();
  }
  const T = QWEN25VL_TENSORS;
  const main = await mergeRows(
    c,
    await ops.read(x!, n),
    { up: w.mm[T.up]!, upB: w.mm[T.upB] ?? null, down: w.mm[T.down]!, downB: w.mm[T.downB] ?? null, norm: null },
    'merger',
  );
  // Rows back in raster order of the merged grid, each token's parts side by side.
  const nt = c.nEmbdText;
  const parts = [main, ...stacks];
  const width = nt * parts.length;
  const out = new Float32Array((n / 4) * width);
  for (let src = 0; src < n / 4; src++) {
    const at = layout.idx[src]!;
    parts.forEach((part, j) => out.set(part.subarray(at * nt, (at + 1) * nt), src * width + j * nt));
  }
  return out;
}
