/**
 * What tiles over splatted activations share (gemv-q4-0-tiles.ts; a Q5_0 twin ran slower, see BENCHMARKS.md): the
 * layout, written once per call from the Q8 rows (splat_q8_x4), and the loop over token chunks, row groups and tiles
 * (gemvSplat). The 4-row kernels (gemv-stored-rows4.ts and the others) splat each 4-byte chunk of a token's block with
 * a shuffle for every row group they meet — 8 shuffles per 128 multiply-adds, repeated for all k/4… row groups; here
 * that is done once per token and block, and a tile reads each splat with a plain 16-byte load at a constant offset
 * from one pointer per block (no shuffle, no per-token address arithmetic), the zero-point term stored pre-multiplied.
 *
 * Splatted layout (x4), tokens in groups of 8 (the last one partly filled), one token-block record of X4_REC bytes:
 *   group tg, block b, token j (0…7) at  dst + (tg·nb + b)·8·X4_REC + j·X4_REC:
 *     [0, 128)  eight i8x16: chunk c (bytes 4c … 4c+3 of the block's 32 quants) repeated 4× (c = 0…7)
 *     128       f32 d_x of the block
 *     132       f32 −8·s_x (s_x = d_x·Σ q_x, the Q8 row's block sum; Q4_0's zero point)
 *     136       8 bytes of padding (records stay 16-byte aligned)
 * Size: ⌈n/8⌉ · 8 · (k/32) · 144 = 4.5·k bytes a token (n rounded up to 8; src/backend/wasm/splat-activations.ts).
 */
import { q8RowBytes } from './q8-activations';

/** Bytes of one token-block record of the splatted layout. */
export const X4_REC: usize = 144;
/** Bytes of one block of a token group (8 records). */
const X4_BLOCK: usize = 8 * X4_REC;
/** Token groups whose splats a chunk holds at most this many bytes of (so they stay in L2 across the row groups). */
const CHUNK_BYTES: usize = 384 << 10;

/**
 * Lays out n Q8 activation rows at x (q8-activations.ts, k elements) in the splatted layout at dst (see the header).
 * Tokens of the last group beyond n are left as they are (never read).
 */
export function splat_q8_x4(x: usize, n: i32, k: i32, dst: usize): void {
  if (!ASC_FEATURE_SIMD) {
    unreachable();
    return;
  }
  const nb = k >> 5;
  const xrb = q8RowBytes(k);
  for (let t = 0; t < n; t++) {
    const row = x + <usize>t * xrb;
    const dp = row + <usize>k;
    const sp = dp + (<usize>nb << 2);
    let o = dst + <usize>(t >> 3) * <usize>nb * X4_BLOCK + <usize>(t & 7) * X4_REC;
    for (let b = 0; b < nb; b++) {
      const xb = row + (<usize>b << 5);
      const xa = v128.load(xb), xc = v128.load(xb, 16);
      v128.store(o, v128.shuffle<i32>(xa, xa, 0, 0, 0, 0));
      v128.store(o, v128.shuffle<i32>(xa, xa, 1, 1, 1, 1), 16);
      v128.store(o, v128.shuffle<i32>(xa, xa, 2, 2, 2, 2), 32);
      v128.store(o, v128.shuffle<i32>(xa, xa, 3, 3, 3, 3), 48);
      v128.store(o, v128.shuffle<i32>(xc, xc, 0, 0, 0, 0), 64);
      v128.store(o, v128.shuffle<i32>(xc, xc, 1, 1, 1, 1), 80);
      v128.store(o, v128.shuffle<i32>(xc, xc, 2, 2, 2, 2), 96);
      v128.store(o, v128.shuffle<i32>(xc, xc, 3, 3, 3, 3), 112);
      store<f32>(o, load<f32>(dp + (<usize>b << 2)), 128);
      store<f32>(o, load<f32>(sp + (<usize>b << 2)) * -8, 132);
      o += X4_BLOCK;
    }
  }
}

/** One token of a group cut by the row range, lanes lo … hi−1 stored: its own function (see rows4-driver.ts). */
function maskedToken<K>(wg: usize, xr: usize, nb: i32, o: usize, lo: i32, hi: i32): void {
  changetype<K>(0).run(wg, xr, nb, o, 0, 1, true, lo, hi);
}

/**
 * Weights in 4-row groups at w (gb bytes a group, nb blocks a row) · n tokens' splatted activations at x → out f32
 * [n, outStride], rows r0 … r1−1 (any bounds: a group cut by them is computed token by token and only its rows inside
 * are stored). `K.run` (a stateless class's @inline method, as in rows4-driver.ts) computes group `wg` · nTok tokens
 * (8, 4 or 1; a constant after inlining) whose first record is at xr (the next X4_REC apart, blocks X4_BLOCK apart).
 * Tokens go in chunks of whole 8-token groups whose splats fit CHUNK_BYTES; per chunk every row group runs its
 * 8-token tiles, then (last group only) a 4-token tile and single tokens. Relaxed-SIMD builds only.
 */
// @ts-ignore: decorator
@inline export function gemvSplat<K>(
  w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32, gb: usize,
): void {
  if (!ASC_FEATURE_RELAXED_SIMD) {
    unreachable();
    return;
  }
  const kernel = changetype<K>(0);
  const nb = k >> 5;
  const tgb = <usize>nb * X4_BLOCK; // bytes of one token group
  const osb = <usize>outStride << 2;
  const ntg = (n + 7) >> 3;
  const chunk = max(1, <i32>(CHUNK_BYTES / tgb));
  for (let c0 = 0; c0 < ntg; c0 += chunk) {
    const c1 = min(ntg, c0 + chunk);
    for (let g = r0 >> 2; g < (r1 + 3) >> 2; g++) {
      const lo = max(r0 - (g << 2), 0);
      const hi = min(r1 - (g << 2), 4);
      const wg = w + <usize>g * gb;
      const og = out + (<usize>(g << 2) << 2);
      for (let tg = c0; tg < c1; tg++) {
        const xg = x + <usize>tg * tgb;
        const t0 = tg << 3;
        const cnt = min(8, n - t0);
        const ot = og + <usize>t0 * osb;
        if (lo != 0 || hi != 4) {
          for (let j = 0; j < cnt; j++) maskedToken<K>(wg, xg + <usize>j * X4_REC, nb, ot + <usize>j * osb, lo, hi);
          continue;
        }
        if (cnt == 8) {
          kernel.run(wg, xg, nb, ot, osb, 8, false, 0, 4);
          continue;
        }
        let j = 0;
        if (cnt >= 4) {
          kernel.run(wg, xg, nb, ot, osb, 4, false, 0, 4);
          j = 4;
        }
        for (; j < cnt; j++) kernel.run(wg, xg + <usize>j * X4_REC, nb, ot + <usize>j * osb, osb, 1, false, 0, 4);
      }
    }
  }
}
