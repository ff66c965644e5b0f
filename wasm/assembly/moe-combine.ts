/**
 * The weighted sum of a mixture-of-experts step's expert outputs (`moe_combine`, src/backend/wasm/expert-matmul.ts
 * `combine`): for each token t < n, out[t] = Σ_s w[t, s] · y[t·nUsed + s] over `cols` f32 columns, slot by slot in
 * order (the first slot's product, then each further one added: f32 multiply, then f32 add, per lane).
 *   out  f32 [n, outStride]   y  f32 [n·nUsed, cols]   w  f32 [n, nUsed]
 */

/** See the file header. */
export function moe_combine(out: usize, y: usize, w: usize, cols: i32, nUsed: i32, n: i32, outStride: i32): void {
  const rowBytes = <usize>cols << 2;
  for (let t = 0; t < n; t++) {
    const o = out + <usize>t * (<usize>outStride << 2);
    const wt = w + <usize>(t * nUsed) * 4;
    const y0 = y + <usize>(t * nUsed) * rowBytes;
    let j = 0;
    if (ASC_FEATURE_SIMD) {
      for (; j + 4 <= cols; j += 4) {
        const off = <usize>j << 2;
        let acc = f32x4.mul(v128.load32_splat(wt), v128.load(y0 + off));
        for (let s = 1; s < nUsed; s++) {
          acc = f32x4.add(acc, f32x4.mul(v128.load32_splat(wt + (<usize>s << 2)), v128.load(y0 + <usize>s * rowBytes + off)));
        }
        v128.store(o + off, acc);
      }
    }
    for (; j < cols; j++) {
      const off = <usize>j << 2;
      let acc = load<f32>(wt) * load<f32>(y0 + off);
      for (let s = 1; s < nUsed; s++) acc += load<f32>(wt + (<usize>s << 2)) * load<f32>(y0 + <usize>s * rowBytes + off);
      store<f32>(o + off, acc);
    }
  }
}
