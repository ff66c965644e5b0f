/**
 * stb_image's integer IDCT (`stbi__idct_block`, derived from jidctint with 12-bit constants; its SSE2 version is
 * bit-identical), for the baseline JPEG decoder (`jpeg-baseline.ts`).
 */

/** stb's 1-D IDCT with 12-bit constants (`STBI__IDCT_1D`), returning [t0, t1, t2, t3, x0, x1, x2, x3]. */
const f2f = (x: number) => Math.trunc(Math.fround(x) * 4096 + 0.5); // stbi__f2f of a float constant
const C = {
  a: f2f(0.5411961),
  b: f2f(-1.847759065),
  c: f2f(0.765366865),
  d: f2f(1.175875602),
  e: f2f(0.298631336),
  f: f2f(2.053119869),
  g: f2f(3.072711026),
  h: f2f(1.50132111),
  i: f2f(-0.899976223),
  j: f2f(-2.562915447),
  k: f2f(-1.96157056),
  l: f2f(-0.390180644),
};
const tmp = new Int32Array(8);
function idct1d(s0: number, s1: number, s2: number, s3: number, s4: number, s5: number, s6: number, s7: number): void {
  let p2 = s2;
  let p3 = s6;
  let p1 = Math.imul(p2 + p3, C.a);
  let t2 = p1 + Math.imul(p3, C.b);
  let t3 = p1 + Math.imul(p2, C.c);
  p2 = s0;
  p3 = s4;
  let t0 = (p2 + p3) * 4096;
  let t1 = (p2 - p3) * 4096;
  const x0 = t0 + t3;
  const x3 = t0 - t3;
  const x1 = t1 + t2;
  const x2 = t1 - t2;
  t0 = s7;
  t1 = s5;
  t2 = s3;
  t3 = s1;
  p3 = t0 + t2;
  let p4 = t1 + t3;
  p1 = t0 + t3;
  p2 = t1 + t2;
  const p5 = Math.imul(p3 + p4, C.d);
  t0 = Math.imul(t0, C.e);
  t1 = Math.imul(t1, C.f);
  t2 = Math.imul(t2, C.g);
  t3 = Math.imul(t3, C.h);
  p1 = p5 + Math.imul(p1, C.i);
  p2 = p5 + Math.imul(p2, C.j);
  p3 = Math.imul(p3, C.k);
  p4 = Math.imul(p4, C.l);
  tmp[0] = t0 + p1 + p3;
  tmp[1] = t1 + p2 + p4;
  tmp[2] = t2 + p2 + p3;
  tmp[3] = t3 + p1 + p4;
  tmp[4] = x0;
  tmp[5] = x1;
  tmp[6] = x2;
  tmp[7] = x3;
}

const clamp8 = (x: number) => (x < 0 ? 0 : Math.min(x, 255));
const val = new Int32Array(64);

/** stb's `stbi__idct_block`: data [64] dequantized coefficients (natural order) → out at (o, stride). */
export function idctBlock(out: Uint8Array, o: number, stride: number, d: Int16Array): void {
  for (let i = 0; i < 8; i++) {
    if (
      d[i + 8] === 0 &&
      d[i + 16] === 0 &&
      d[i + 24] === 0 &&
      d[i + 32] === 0 &&
      d[i + 40] === 0 &&
      d[i + 48] === 0 &&
      d[i + 56] === 0
    ) {
      const dc = d[i]! * 4;
      for (let r = 0; r < 8; r++) val[i + r * 8] = dc;
      continue;
    }
    idct1d(d[i]!, d[i + 8]!, d[i + 16]!, d[i + 24]!, d[i + 32]!, d[i + 40]!, d[i + 48]!, d[i + 56]!);
    const [t0, t1, t2, t3] = [tmp[0]!, tmp[1]!, tmp[2]!, tmp[3]!];
    const [x0, x1, x2, x3] = [tmp[4]! + 512, tmp[5]! + 512, tmp[6]! + 512, tmp[7]! + 512];
    val[i] = (x0 + t3) >> 10;
    val[i + 56] = (x0 - t3) >> 10;
    val[i + 8] = (x1 + t2) >> 10;
    val[i + 48] = (x1 - t2) >> 10;
    val[i + 16] = (x2 + t1) >> 10;
    val[i + 40] = (x2 - t1) >> 10;
    val[i + 24] = (x3 + t0) >> 10;
    val[i + 32] = (x3 - t0) >> 10;
  }
  for (let r = 0; r < 8; r++) {
    const v = r * 8;
    idct1d(val[v]!, val[v + 1]!, val[v + 2]!, val[v + 3]!, val[v + 4]!, val[v + 5]!, val[v + 6]!, val[v + 7]!);
    const [t0, t1, t2, t3] = [tmp[0]!, tmp[1]!, tmp[2]!, tmp[3]!];
    const bias = 65536 + (128 << 17);
    const [x0, x1, x2, x3] = [tmp[4]! + bias, tmp[5]! + bias, tmp[6]! + bias, tmp[7]! + bias];
    const p = o + r * stride;
    out[p] = clamp8((x0 + t3) >> 17);
    out[p + 7] = clamp8((x0 - t3) >> 17);
    out[p + 1] = clamp8((x1 + t2) >> 17);
    out[p + 6] = clamp8((x1 - t2) >> 17);
    out[p + 2] = clamp8((x2 + t1) >> 17);
    out[p + 5] = clamp8((x2 - t1) >> 17);
    out[p + 3] = clamp8((x3 + t0) >> 17);
    out[p + 4] = clamp8((x3 - t0) >> 17);
  }
}
