/**
 * Pixtral's 2-D RoPE (llama.cpp `build_rope_2d`) on the host, for the backend encoder (`vit-ops.ts`), which reads q
 * and k once per block, rotates them here and writes them back: the first half of each head rotated by the patch's
 * row with the even frequencies base^(−2k/hd), the second half by its column with the odd ones, adjacent pairs
 * (ggml's normal mode) — the same rotation as `projector-pixtral.ts`. The cos/sin table is made once per picture.
 */

/** cos and sin of each row's angle for each pair of a head: [n, hd / 2] each, pairs in head order. */
export interface Rope2dTable {
  readonly cos: Float32Array;
  readonly sin: Float32Array;
}

/** The table for a gw × gh patch grid (token t at row ⌊t / gw⌋, column t mod gw). */
export function pixtralRopeTable(gw: number, gh: number, hd: number, base: number): Rope2dTable {
  const half = hd / 2;
  const pairs = hd / 2;
  const n = gw * gh;
  const cos = new Float32Array(n * pairs);
  const sin = new Float32Array(n * pairs);
  const oddScale = base ** (-2 / hd);
  for (let t = 0; t < n; t++) {
    const pos = [Math.floor(t / gw), t % gw];
    for (let part = 0; part < 2; part++) {
      const scale = part === 0 ? 1 : oddScale;
      for (let i0 = 0; i0 < half; i0 += 2) {
        const theta = pos[part]! * scale * base ** (-i0 / half);
        const k = t * pairs + (part * half + i0) / 2;
        cos[k] = Math.cos(theta);
        sin[k] = Math.sin(theta);
      }
    }
  }
  return { cos, sin };
}

/** Rotates the adjacent pairs of every head of x ([n, heads · hd]) in place by the table's angles. */
export function applyRope2d(x: Float32Array, table: Rope2dTable, heads: number, hd: number): void {
  const pairs = hd / 2;
  const n = x.length / (heads * hd);
  for (let t = 0; t < n; t++) {
    for (let h = 0; h < heads; h++) {
      const o = (t * heads + h) * hd;
      for (let k = 0; k < pairs; k++) {
        const c = table.cos[t * pairs + k]!;
        const s = table.sin[t * pairs + k]!;
        const a = x[o + 2 * k]!;
        const b = x[o + 2 * k + 1]!;
        x[o + 2 * k] = a * c - b * s;
        x[o + 2 * k + 1] = a * s + b * c;
      }
    }
  }
}
