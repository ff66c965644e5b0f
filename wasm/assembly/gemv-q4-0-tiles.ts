/**
 * Q4_0 prefill over weights stored in 4-row groups (rows4-layout.ts) with the activations laid out once per call the
 * way the tile's inner loop reads them ("splatted" Q8 rows, `splat_q8_x4`). gemv_q4_0_r4 (gemv-stored-rows4.ts)
 * splats each 4-byte chunk of a token's block with a shuffle for every row group it meets — 8 shuffles per 128
 * multiply-adds, repeated for all k/4… row groups; here they are done once per token and block, and the tile reads
 * each splat with a plain 16-byte load at a constant offset from one pointer per block (no shuffle, no per-token
 * address arithmetic), with −8·s_x stored pre-multiplied. Same dots, sums and f32 operations in the same order as
 * gemv_q4_0_r4, so the outputs are bit-identical to it. Relaxed-SIMD builds only (elsewhere a trap).
 *
 * Splatted layout (x4), tokens in groups of 8 (the last one partly filled), one token-block record of X4_REC bytes:
 *   group tg, block b, token j (0…7) at  dst + (tg·nb + b)·8·X4_REC + j·X4_REC:
 *     [0, 128)  eight i8x16: chunk c (bytes 4c … 4c+3 of the block's 32 quants) repeated 4× (c = 0…7)
 *     128       f32 d_x of the block
 *     132       f32 −8·s_x (s_x = d_x·Σ q_x, the Q8 row's block sum; −8: Q4_0's zero point)
 *     136       8 bytes of padding (records stay 16-byte aligned)
 * Size: x4Bytes(n, k) = ⌈n/8⌉ · 8 · (k/32) · 144 = 4.5·k bytes a token (n rounded up to 8).
 */
import { q8RowBytes } from './q8-activations';
import { storeTile } from './rows4-driver';
import { scales4 } from './gemv-stored-rows4';
import { fmaF32x4, hiNibbles } from './simd-dot';

/** Bytes of one token-block record of the splatted layout. */
const X4_REC: usize = 144;
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

/**
 * acc + d·(dx·Σ q·qx − 8·s_x) for the token whose record is at r; l*: low nibbles of chunks 0…3, h*: high. The i16
 * sums widen by a dot with a hoisted ones vector (`i16x8.splat(1)`): the same pairwise sums as
 * extadd_pairwise_i16x8_s, for which V8 reloads its constant's address at every use (+0–6 %, within noise).
 */
// @ts-ignore: decorator
@inline function q4Token(
  acc: v128, l0: v128, l1: v128, l2: v128, l3: v128, h0: v128, h1: v128, h2: v128, h3: v128, d: v128, r: usize,
  ones: v128,
): v128 {
  let s = i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r), l0);
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 16), l1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 32), l2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 48), l3));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 64), h0));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 80), h1));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 96), h2));
  s = i16x8.add(s, i16x8.relaxed_dot_i8x16_i7x16_s(v128.load(r, 112), h3));
  const q = f32x4.convert_i32x4_s(i32x4.dot_i16x8_s(s, ones));
  const t = fmaF32x4(v128.load32_splat(r, 132), q, v128.load32_splat(r, 128));
  return fmaF32x4(acc, t, d);
}

/**
 * One tile: group `wg` · nTok (1, 4 or 8; a constant after inlining) tokens whose first record is at xr (the next
 * X4_REC apart, blocks X4_BLOCK apart) → out rows o, o + osb, … (`masked`: only lanes lo … hi−1).
 */
// @ts-ignore: decorator
@inline function tile(
  wg: usize, xr: usize, nb: i32, o: usize, osb: usize, nTok: i32, masked: bool, lo: i32, hi: i32,
): void {
  const mask = i8x16.splat(0x0f);
  const ones = i16x8.splat(1);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  let r = xr;
  for (let b = 0; b < nb; b++) {
    const pb = wg + <usize>b * 72;
    const d = scales4(pb);
    const v0 = v128.load(pb, 8), v1 = v128.load(pb, 24), v2 = v128.load(pb, 40), v3 = v128.load(pb, 56);
    const l0 = v128.and(v0, mask), l1 = v128.and(v1, mask), l2 = v128.and(v2, mask), l3 = v128.and(v3, mask);
    const h0 = hiNibbles(v0, mask), h1 = hiNibbles(v1, mask), h2 = hiNibbles(v2, mask), h3 = hiNibbles(v3, mask);
    a0 = q4Token(a0, l0, l1, l2, l3, h0, h1, h2, h3, d, r, ones);
    if (nTok >= 4) {
      a1 = q4Token(a1, l0, l1, l2, l3, h0, h1, h2, h3, d, r + X4_REC, ones);
      a2 = q4Token(a2, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 2 * X4_REC, ones);
      a3 = q4Token(a3, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 3 * X4_REC, ones);
    }
    if (nTok == 8) {
      a4 = q4Token(a4, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 4 * X4_REC, ones);
      a5 = q4Token(a5, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 5 * X4_REC, ones);
      a6 = q4Token(a6, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 6 * X4_REC, ones);
      a7 = q4Token(a7, l0, l1, l2, l3, h0, h1, h2, h3, d, r + 7 * X4_REC, ones);
    }
    r += X4_BLOCK;
  }
  storeTile(o, osb, nTok, masked, lo, hi, a0, a1, a2, a3, a4, a5, a6, a7);
}

/** One token of a group cut by the row range, lanes lo … hi−1 stored: its own function (see rows4-driver.ts). */
function maskedToken(wg: usize, xr: usize, nb: i32, o: usize, lo: i32, hi: i32): void {
  tile(wg, xr, nb, o, 0, 1, true, lo, hi);
}

/**
 * Q4_0 weights in 4-row groups · n tokens' splatted activations at x (splat_q8_x4) → out f32 [n, outStride], rows
 * r0 … r1−1 (any bounds: a group cut by them is computed token by token and only its rows inside are stored).
 * Tokens go in chunks of whole 8-token groups whose splats fit CHUNK_BYTES; per chunk every row group runs its
 * 8-token tiles, then (last group only) a 4-token tile and single tokens.
 */
export function gemv_q4_0_r4x(w: usize, x: usize, out: usize, k: i32, r0: i32, r1: i32, n: i32, outStride: i32): void {
  if (!ASC_FEATURE_RELAXED_SIMD) {
    unreachable();
    return;
  }
  const nb = k >> 5;
  const gb = <usize>nb * 72;
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
          for (let j = 0; j < cnt; j++) maskedToken(wg, xg + <usize>j * X4_REC, nb, ot + <usize>j * osb, lo, hi);
          continue;
        }
        if (cnt == 8) {
          tile(wg, xg, nb, ot, osb, 8, false, 0, 4);
          continue;
        }
        let j = 0;
        if (cnt >= 4) {
          tile(wg, xg, nb, ot, osb, 4, false, 0, 4);
          j = 4;
        }
        for (; j < cnt; j++) tile(wg, xg + <usize>j * X4_REC, nb, ot + <usize>j * osb, osb, 1, false, 0, 4);
      }
    }
  }
}
