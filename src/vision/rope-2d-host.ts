/**
 * The 2-D RoPEs of the vision encoders on the host, for the backend encoder (`vit-ops.ts`), which reads q and k once
 * per block, rotates them here and writes them back; the cos/sin table is made once per picture:
 * - pixtral (llama.cpp `build_rope_2d`): the first half of each head rotated by the patch's row with the even
 *   frequencies base^(−2k/hd), the second half by its column with the odd ones, adjacent pairs (ggml's normal mode),
 *   as `projector-pixtral.ts`;
 * - gemma4v (`clip_graph_gemma4v` `add_pos`): NeoX pairs (j, j + hd/4) within each half, the first half by column,
 *   the second by row, frequencies base^(−2j / (hd/2)), as `projector-gemma4v.ts`.
 */

/** cos and sin of each row's angle for each pair of a head: [n, hd / 2] each, pairs in head order. */
export interface Rope2dTable {
  readonly cos: Float32Array;
  readonly sin: Float32Array;
  /** 'adjacent': pair k is (2k, 2k + 1); 'neox': pair k of half h = ⌊k / (hd/4)⌋ is (h·hd/2 + j, h·hd/2 + j + hd/4). */
  readonly pairs: 'adjacent' | 'neox';
}

/** The gemma4v table for a gw × gh patch grid (token t at column t mod gw, row ⌊t / gw⌋). */
export function gemma4vRopeTable(gw: number, gh: number, hd: number, base: number): Rope2dTable {
  const half = hd / 2;
  const quarter = half / 2;
  const pairs = hd / 2;
  const n = gw * gh;
  const cos = new Float32Array(n * pairs);
  const sin = new Float32Array(n * pairs);
  for (let t = 0; t < n; t++) {
    const pos = [t % gw, Math.floor(t / gw)];
    for (let part = 0; part < 2; part++) {
      for (let j = 0; j < quarter; j++) {
        const theta = pos[part]! * base ** ((-2 * j) / half);
        cos[t * pairs + part * quarter + j] = Math.cos(theta);
        sin[t * pairs + part * quarter + j] = Math.sin(theta);
      }
    }
  }
  return { cos, sin, pairs: 'neox' };
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
  return { cos, sin, pairs: 'adjacent' };
}

/** Rotates the pairs of every head of x ([n, heads · hd]) in place by the table's angles. */
export function applyRope2d(x: Float32Array, table: Rope2dTable, heads: number, hd: number): void {
  const pairs = hd / 2;
  const quarter = hd / 4;
  const neox = table.pairs === 'neox';
  const n = x.length / (heads * hd);
  for (let t = 0; t < n; t++) {
    for (let h = 0; h < heads; h++) {
      const o = (t * heads + h) * hd;
      for (let k = 0; k < pairs; k++) {
        const c = table.cos[t * pairs + k]!;
        const s = table.sin[t * pairs + k]!;
        const i1 = neox ? o + Math.floor(k / quarter) * pairs + (k % quarter) : o + 2 * k;
        const i2 = neox ? i1 + quarter : i1 + 1;
        const a = x[i1]!;
        const b = x[i2]!;
        x[i1] = a * c - b * s;
        x[i2] = a * s + b * c;
      }
    }
  }
}
