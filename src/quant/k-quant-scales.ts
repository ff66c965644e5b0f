/**
 * Scale searches shared by the K-quant reference quantizers, mirroring ggml's `make_qx_quants`, `make_q3_quants`,
 * `make_qkx2_quants` and `get_scale_min_k4` operation by operation (every f32 product and sum rounded with
 * Math.fround in C's evaluation order) so the produced blocks are byte-identical to ggml's `quantize_row_*_ref`.
 */

import { nearestInt, signedAbsMax } from './rounding.js';

const fround = Math.fround;
/** ggml GROUP_MAX_EPS (1e-15f): below this a group counts as all zero. */
export const GROUP_MAX_EPS = fround(1e-15);

const clamp = (v: number, lo: number, hi: number): number => (v < lo ? lo : v > hi ? hi : v);

/**
 * ggml `make_qx_quants` without importance weights: symmetric quants L[i] ∈ [0, 2·nmax) (stored + nmax) for
 * `x[xo .. xo+n)`, refining the scale over 18 trial inverse scales. rmseType picks the error weight (1: x², 2: 1,
 * 3: |x|, 4: √|x|; 0: no search). Returns the scale.
 */
export function makeQxQuants(
  n: number,
  nmax: number,
  x: Float32Array,
  xo: number,
  L: Uint8Array | Int8Array,
  lo: number,
  rmseType: number,
): number {
  const max = signedAbsMax(x, xo, n);
  if (Math.abs(max) < GROUP_MAX_EPS) {
    for (let i = 0; i < n; i++) L[lo + i] = 0;
    return 0;
  }
  let iscale = fround(-nmax / max);
  if (rmseType === 0) {
    for (let i = 0; i < n; i++) L[lo + i] = nmax + clamp(nearestInt(fround(iscale * x[xo + i]!)), -nmax, nmax - 1);
    return fround(1 / iscale);
  }
  let returnEarly = false;
  if (rmseType < 0) {
    rmseType = -rmseType;
    returnEarly = true;
  }
  const weight = (v: number): number =>
    rmseType === 1 ? fround(v * v) : rmseType === 2 ? 1 : rmseType === 3 ? Math.abs(v) : fround(Math.sqrt(Math.abs(v)));
  let sumlx = 0;
  let suml2 = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xo + i]!;
    const l = clamp(nearestInt(fround(iscale * v)), -nmax, nmax - 1);
    L[lo + i] = l + nmax;
    const w = weight(v);
    sumlx = fround(sumlx + fround(fround(w * v) * l));
    suml2 = fround(suml2 + fround(fround(w * l) * l));
  }
  let scale = suml2 !== 0 ? fround(sumlx / suml2) : 0;
  if (returnEarly) return suml2 > 0 ? fround(0.5 * fround(scale + fround(1 / iscale))) : fround(1 / iscale);
  let best = fround(scale * sumlx);
  const tenth = fround(0.1);
  for (let is = -9; is <= 9; is++) {
    if (is === 0) continue;
    iscale = fround(-fround(nmax + fround(tenth * is)) / max);
    sumlx = 0;
    suml2 = 0;
    for (let i = 0; i < n; i++) {
      const v = x[xo + i]!;
      const l = clamp(nearestInt(fround(iscale * v)), -nmax, nmax - 1);
      const w = weight(v);
      sumlx = fround(sumlx + fround(fround(w * v) * l));
      suml2 = fround(suml2 + fround(fround(w * l) * l));
    }
    if (suml2 > 0 && fround(sumlx * sumlx) > fround(best * suml2)) {
      for (let i = 0; i < n; i++) L[lo + i] = nmax + clamp(nearestInt(fround(iscale * x[xo + i]!)), -nmax, nmax - 1);
      scale = fround(sumlx / suml2);
      best = fround(scale * sumlx);
    }
  }
  return scale;
}

/**
 * ggml `make_q3_quants` with `do_rmse`: symmetric 3-bit quants (stored + nmax) refined by up to 5 passes of
 * coordinate descent on the x²-weighted error. Returns the scale.
 */
export function makeQ3Quants(n: number, nmax: number, x: Float32Array, xo: number, L: Int8Array, lo: number): number {
  const max = signedAbsMax(x, xo, n);
  if (Math.abs(max) < GROUP_MAX_EPS) {
    for (let i = 0; i < n; i++) L[lo + i] = 0;
    return 0;
  }
  const iscale = fround(-nmax / max);
  let sumlx = 0;
  let suml2 = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xo + i]!;
    const l = clamp(nearestInt(fround(iscale * v)), -nmax, nmax - 1);
    L[lo + i] = l;
    const w = fround(v * v);
    sumlx = fround(sumlx + fround(fround(w * v) * l));
    suml2 = fround(suml2 + fround(fround(w * l) * l));
  }
  for (let itry = 0; itry < 5; itry++) {
    let nChanged = 0;
    for (let i = 0; i < n; i++) {
      const v = x[xo + i]!;
      const li = L[lo + i]!;
      const w = fround(v * v);
      let slx = fround(sumlx - fround(fround(w * v) * li));
      if (slx > 0) {
        let sl2 = fround(suml2 - fround(fround(w * li) * li));
        const newL = clamp(nearestInt(fround(fround(v * sl2) / slx)), -nmax, nmax - 1);
        if (newL !== li) {
          slx = fround(slx + fround(fround(w * v) * newL));
          sl2 = fround(sl2 + fround(fround(w * newL) * newL));
          if (sl2 > 0 && fround(fround(slx * slx) * suml2) > fround(fround(sumlx * sumlx) * sl2)) {
            L[lo + i] = newL;
            sumlx = slx;
            suml2 = sl2;
            nChanged++;
          }
        }
      }
    }
    if (nChanged === 0) break;
  }
  for (let i = 0; i < n; i++) L[lo + i] = L[lo + i]! + nmax;
  return suml2 > 0 ? fround(sumlx / suml2) : 0;
}

/**
 * ggml `make_qkx2_quants`: asymmetric quants L[i] ∈ [0, nmax] with a scale and a (non-positive) minimum, searched
 * over nstep+1 trial scales minimising the weighted (abs or squared) error. Writes −min to `mins[mi]` and returns
 * the scale. `laux` is scratch of n bytes.
 */
export function makeQkx2Quants(
  n: number,
  nmax: number,
  x: Float32Array,
  xo: number,
  weights: Float32Array,
  L: Uint8Array,
  lo: number,
  mins: Float32Array,
  mi: number,
  laux: Uint8Array,
  rmin: number,
  rdelta: number,
  nstep: number,
  useMad: boolean,
): number {
  let min = x[xo]!;
  let max = x[xo]!;
  let sumW = weights[0]!;
  let sumX = fround(sumW * x[xo]!);
  for (let i = 1; i < n; i++) {
    const v = x[xo + i]!;
    if (v < min) min = v;
    if (v > max) max = v;
    const w = weights[i]!;
    sumW = fround(sumW + w);
    sumX = fround(sumX + fround(w * v));
  }
  if (min > 0) min = 0;
  if (max === min) {
    for (let i = 0; i < n; i++) L[lo + i] = 0;
    mins[mi] = -min;
    return 0;
  }
  let iscale = fround(nmax / fround(max - min));
  let scale = fround(1 / iscale);
  let bestError = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xo + i]!;
    const l = clamp(nearestInt(fround(iscale * fround(v - min))), 0, nmax);
    L[lo + i] = l;
    let diff = fround(fround(fround(scale * l) + min) - v);
    diff = useMad ? Math.abs(diff) : fround(diff * diff);
    bestError = fround(bestError + fround(weights[i]! * diff));
  }
  if (nstep < 1) {
    mins[mi] = -min;
    return scale;
  }
  for (let is = 0; is <= nstep; is++) {
    // min moves when a better fit is found; later trials use the updated min, as ggml does.
    iscale = fround(fround(fround(rmin + fround(rdelta * is)) + nmax) / fround(max - min));
    let sumL = 0;
    let sumL2 = 0;
    let sumXL = 0;
    for (let i = 0; i < n; i++) {
      const v = x[xo + i]!;
      const l = clamp(nearestInt(fround(iscale * fround(v - min))), 0, nmax);
      laux[i] = l;
      const wl = fround(weights[i]! * l);
      sumL = fround(sumL + wl);
      sumL2 = fround(sumL2 + fround(wl * l));
      sumXL = fround(sumXL + fround(wl * v));
    }
    const D = fround(fround(sumW * sumL2) - fround(sumL * sumL));
    if (D > 0) {
      let thisScale = fround(fround(fround(sumW * sumXL) - fround(sumX * sumL)) / D);
      let thisMin = fround(fround(fround(sumL2 * sumX) - fround(sumL * sumXL)) / D);
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = fround(sumXL / sumL2);
      }
      let curError = 0;
      for (let i = 0; i < n; i++) {
        let diff = fround(fround(fround(thisScale * laux[i]!) + thisMin) - x[xo + i]!);
        diff = useMad ? Math.abs(diff) : fround(diff * diff);
        curError = fround(curError + fround(weights[i]! * diff));
      }
      if (curError < bestError) {
        for (let i = 0; i < n; i++) L[lo + i] = laux[i]!;
        bestError = curError;
        scale = thisScale;
        min = thisMin;
      }
    }
  }
  mins[mi] = -min;
  return scale;
}

/**
 * ggml `get_scale_min_k4`: the 6-bit scale and min of sub-block j (0..7) from a Q4_K/Q5_K 12-byte scales field at
 * `q[o ..]`. Returns `scale | (min << 8)`.
 */
export function getScaleMinK4(j: number, q: Uint8Array, o: number): number {
  if (j < 4) return (q[o + j]! & 63) | ((q[o + j + 4]! & 63) << 8);
  const sc = (q[o + j + 4]! & 0xf) | ((q[o + j - 4]! >> 6) << 4);
  const m = (q[o + j + 4]! >> 4) | ((q[o + j]! >> 6) << 4);
  return sc | (m << 8);
}
