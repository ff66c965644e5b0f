/**
 * lfm2's short gated convolution (`Ops.shortConv`) over a step's rows, so neither decode nor prefill runs a loop per
 * token and channel in TypeScript: out[t, c] = C[t, c] · Σ_k kernel[c, k] · window[t + k, c] over the window
 * [state ‖ B·x] of taps − 1 + n rows, then state = the window's last taps − 1 rows. Sums in f32, taps in order, the
 * product B·x rounded to f32 first (ggml's mul then ssm_conv).
 */

/**
 *   state  f32 [taps − 1, C] conv window, updated in place (zeroed by the host when the sequence starts)
 *   bcx    f32 [n, bcxStride]: B (columns 0 … C), C (C … 2C), x (2C … 3C)
 *   kernel f32 [C, taps];  out f32 [n, outStride] (C columns written)
 */
export function short_conv(
  state: usize,
  bcx: usize,
  bcxStride: i32,
  kernel: usize,
  out: usize,
  outStride: i32,
  n: i32,
  C: i32,
  taps: i32,
): void {
  const w = taps - 1;
  const rowBytes = <usize>C << 2;
  const ts = <usize>taps << 2;
  for (let t = 0; t < n; t++) {
    const o = out + ((<usize>t * <usize>outStride) << 2);
    const gateRow = bcx + ((<usize>t * <usize>bcxStride) << 2) + rowBytes; // C of row t
    let c = 0;
    if (ASC_FEATURE_SIMD) {
      for (; c + 4 <= C; c += 4) {
        const off = <usize>c << 2;
        const kp = kernel + <usize>c * ts;
        let sum = f32x4.splat(0);
        for (let k = 0; k < taps; k++) {
          const kk = kp + (<usize>k << 2);
          let kv = f32x4.splat(load<f32>(kk));
          kv = f32x4.replace_lane(kv, 1, load<f32>(kk + ts));
          kv = f32x4.replace_lane(kv, 2, load<f32>(kk + 2 * ts));
          kv = f32x4.replace_lane(kv, 3, load<f32>(kk + 3 * ts));
          sum = f32x4.add(sum, f32x4.mul(kv, window4(state, bcx, bcxStride, rowBytes, w, t + k, off)));
        }
        v128.store(o + off, f32x4.mul(v128.load(gateRow + off), sum));
      }
    }
    for (; c < C; c++) {
      const off = <usize>c << 2;
      const kp = kernel + <usize>c * ts;
      let sum: f32 = 0;
      for (let k = 0; k < taps; k++) {
        sum += load<f32>(kp + (<usize>k << 2)) * window1(state, bcx, bcxStride, rowBytes, w, t + k, off);
      }
      store<f32>(o + off, load<f32>(gateRow + off) * sum);
    }
  }
  // The window slides n rows: row r becomes window row n + r (ascending: a state row n + r > r is still unread).
  for (let r = 0; r < w; r++) {
    const dst = state + <usize>r * rowBytes;
    const src = n + r;
    if (src < w) {
      memory.copy(dst, state + <usize>src * rowBytes, rowBytes);
      continue;
    }
    let c = 0;
    if (ASC_FEATURE_SIMD) {
      for (; c + 4 <= C; c += 4) {
        const off = <usize>c << 2;
        v128.store(dst + off, window4(state, bcx, bcxStride, rowBytes, w, src, off));
      }
    }
    for (; c < C; c++) {
      const off = <usize>c << 2;
      store<f32>(dst + off, window1(state, bcx, bcxStride, rowBytes, w, src, off));
    }
  }
}

/** Window row r, channels at byte offset off … off + 16: a state row, or B·x of step row r − w. */
// @ts-ignore: decorator
@inline function window4(state: usize, bcx: usize, stride: i32, rowBytes: usize, w: i32, r: i32, off: usize): v128 {
  if (r < w) return v128.load(state + <usize>r * rowBytes + off);
  const row = bcx + ((<usize>(r - w) * <usize>stride) << 2) + off;
  return f32x4.mul(v128.load(row), v128.load(row + 2 * rowBytes));
}

/** One channel of window row r (see window4). */
// @ts-ignore: decorator
@inline function window1(state: usize, bcx: usize, stride: i32, rowBytes: usize, w: i32, r: i32, off: usize): f32 {
  if (r < w) return load<f32>(state + <usize>r * rowBytes + off);
  const row = bcx + ((<usize>(r - w) * <usize>stride) << 2) + off;
  return load<f32>(row) * load<f32>(row + 2 * rowBytes);
}
