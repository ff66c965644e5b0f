/**
 * The patch merge of the pixel-shuffle projectors (idefics3, lfm2; llama.cpp `clip_graph::build_patch_merge_permute`)
 * and the plain row-wise matrix product they project with.
 */

/**
 * Pixel shuffle of a `width` × `height` patch grid: each `s`×`s` block of patches becomes one token whose vector is
 * the block's patch vectors concatenated, row within the block outer, column inner (the grid zero-padded up to a
 * multiple of `s`). x: [height · width, d] (row-major) → [⌈height / s⌉ · ⌈width / s⌉, d · s²].
 */
export function pixelShuffle(x: Float32Array, width: number, height: number, d: number, s: number): Float32Array {
  const ow = Math.ceil(width / s);
  const oh = Math.ceil(height / s);
  const out = new Float32Array(ow * oh * d * s * s); // padding stays 0
  for (let by = 0; by < oh; by++) {
    for (let bx = 0; bx < ow; bx++) {
      const o = (by * ow + bx) * d * s * s;
      for (let ky = 0; ky < s; ky++) {
        const y = by * s + ky;
        for (let kx = 0; kx < s; kx++) {
          const px = bx * s + kx;
          if (y >= height || px >= width) continue;
          out.set(x.subarray((y * width + px) * d, (y * width + px + 1) * d), o + (ky * s + kx) * d);
        }
      }
    }
  }
  return out;
}

/** y = W·x (+ b) for each row. x: [n, inDim], W: [outDim, inDim], b: [outDim] → [n, outDim]. */
export function matmulRows(
  x: Float32Array,
  inDim: number,
  w: Float32Array,
  outDim: number,
  b?: Float32Array,
): Float32Array {
  const n = x.length / inDim;
  const y = new Float32Array(n * outDim);
  for (let t = 0; t < n; t++) {
    const xo = t * inDim;
    for (let j = 0; j < outDim; j++) {
      const wo = j * inDim;
      let s = 0;
      for (let i = 0; i < inDim; i++) s += w[wo + i] * x[xo + i];
      y[t * outDim + j] = b === undefined ? s : s + b[j];
    }
  }
  return y;
}
