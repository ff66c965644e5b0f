/**
 * Gated-FFN activation: out = act(gate) · up, elementwise over `len` f32 values (SwiGLU: act = SiLU x·σ(x); GEGLU:
 * act = llama.cpp's tanh-approximated GELU 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))). tanh(z) is computed as
 * 1 − 2 / (e^{2z} + 1), exact at both tails with the clamped exp. gpt-oss's clamped SwiGLU (ggml `swiglu_oai`):
 * out = x·σ(1.702·x)·(clamp(up, −7, 7) + 1) with x = min(gate, 7).
 *   out, gate, up  f32 [len] (out may alias either)
 */
import { expf, expf4 } from './fast-math';
import { expNeg4 } from './softmax-exp';

const GELU_COEF: f32 = 0.7978845608028654; // √(2/π)
const GELU_CUBIC: f32 = 0.044715;
const OAI_ALPHA: f32 = 1.702; // swiglu_oai's sigmoid slope
const OAI_LIMIT: f32 = 7; // … and its clamp

// @ts-ignore: decorator
@inline function actScalar(x: f32, gelu: bool): f32 {
  if (gelu) {
    const z = GELU_COEF * x * (1 + GELU_CUBIC * x * x);
    const e = expf(min<f32>(2 * z, 88.7));
    return 0.5 * x * (2 - 2 / (e + 1));
  }
  return x / (1 + expf(min<f32>(-x, 88.7)));
}

/**
 * GELU (tanh) of four lanes as x · σ(2z) — 0.5·(1 + tanh z) is σ(2z) — with σ(t) = (t ≥ 0 ? 1 : e) / (1 + e),
 * e = e^−|t| from softmax-exp.ts's expNeg4 (no NaN/±0 fix-ups, no float → int conversion; one division). The same
 * function as actScalar's to within a few f32 roundings (|Δ| ≤ 4e-7 · |x|); lanes with z below −43.6 give
 * x · e^−87.3 (|·| < 1e-36) where actScalar gives its own tiny value.
 */
// @ts-ignore: decorator
@inline function gelu4(x: v128): v128 {
  const c = f32x4.mul(x, f32x4.splat(2 * GELU_COEF));
  const t = f32x4.add(c, f32x4.mul(f32x4.mul(c, f32x4.splat(GELU_CUBIC)), f32x4.mul(x, x))); // 2z
  const e = expNeg4(v128.or(t, f32x4.splat(-0.0))); // e^−|t|
  const num = v128.bitselect(e, f32x4.splat(1), i32x4.shr_s(t, 31)); // t < 0 ? e : 1
  return f32x4.mul(x, f32x4.div(num, f32x4.add(e, f32x4.splat(1))));
}

/** See the file header; `act` 0 = SiLU, 1 = GELU (tanh), 2 = gpt-oss's clamped SwiGLU. */
export function glu_f32(out: usize, gate: usize, up: usize, len: i32, act: i32): void {
  if (act == 2) {
    swigluOai(out, gate, up, len);
    return;
  }
  const gelu = act != 0;
  let i = 0;
  if (ASC_FEATURE_SIMD) {
    if (gelu) {
      // Four vectors a step: V8 materializes each vector constant per use site, so four share one set of them.
      for (; i + 16 <= len; i += 16) {
        const off = <usize>i << 2;
        const a = gelu4(v128.load(gate + off));
        const b = gelu4(v128.load(gate + off, 16));
        const c = gelu4(v128.load(gate + off, 32));
        const d = gelu4(v128.load(gate + off, 48));
        v128.store(out + off, f32x4.mul(a, v128.load(up + off)));
        v128.store(out + off, f32x4.mul(b, v128.load(up + off, 16)), 16);
        v128.store(out + off, f32x4.mul(c, v128.load(up + off, 32)), 32);
        v128.store(out + off, f32x4.mul(d, v128.load(up + off, 48)), 48);
      }
      for (; i + 4 <= len; i += 4) {
        const off = <usize>i << 2;
        v128.store(out + off, f32x4.mul(gelu4(v128.load(gate + off)), v128.load(up + off)));
      }
    } else {
      const one = f32x4.splat(1);
      for (; i + 4 <= len; i += 4) {
        const off = <usize>i << 2;
        const x = v128.load(gate + off);
        const a = f32x4.div(x, f32x4.add(one, expf4(f32x4.neg(x))));
        v128.store(out + off, f32x4.mul(a, v128.load(up + off)));
      }
    }
  }
  for (; i < len; i++) {
    const off = <usize>i << 2;
    store<f32>(out + off, actScalar(load<f32>(gate + off), gelu) * load<f32>(up + off));
  }
}

/** glu_f32's act 2 (see the file header). */
function swigluOai(out: usize, gate: usize, up: usize, len: i32): void {
  let i = 0;
  if (ASC_FEATURE_SIMD) {
    const one = f32x4.splat(1);
    const lim = f32x4.splat(OAI_LIMIT);
    for (; i + 4 <= len; i += 4) {
      const off = <usize>i << 2;
      // Pseudo-min/max with the loaded value first: a NaN lane stays NaN, as with f32x4.min/max (expf4's header).
      const x = f32x4.pmin(v128.load(gate + off), lim);
      const y = f32x4.pmin(f32x4.pmax(v128.load(up + off), f32x4.neg(lim)), lim);
      const a = f32x4.div(x, f32x4.add(one, expf4(f32x4.mul(x, f32x4.splat(-OAI_ALPHA)))));
      v128.store(out + off, f32x4.mul(a, f32x4.add(y, one)));
    }
  }
  for (; i < len; i++) {
    const off = <usize>i << 2;
    const x = min<f32>(load<f32>(gate + off), OAI_LIMIT);
    const y = min<f32>(max<f32>(load<f32>(up + off), -OAI_LIMIT), OAI_LIMIT);
    store<f32>(out + off, (x / (1 + expf(min<f32>(-OAI_ALPHA * x, 88.7)))) * (y + 1));
  }
}
