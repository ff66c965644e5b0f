// glu: out = act(gate) · up, elementwise over n·cols values; act = SiLU (SwiGLU) or GELU, tanh approximation
// (GEGLU), chosen by the override IS_GELU. Entries: `main` (three buffers), `main_out_gate` (out === gate),
// `main_out_up` (out === up); `main_oai`: gpt-oss's clamped SwiGLU (ggml swiglu_oai: x = min(gate, 7),
// y = clamp(up, −7, 7), x·σ(1.702·x)·(y + 1)); `main_act` (out = gelu(out), no gate: bert's un-gated FFN; IS_GELU
// must be set), which rounds x and the result to f16 as llama.cpp's CPU backend does (GGML_GELU_FP16 table; 0 for
// x ≤ −10, x for x ≥ 10). Dispatch: 1-D, (gx, gy). Reference: CpuOps.glu.

override IS_GELU: bool = false;

struct Params {
  count: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> gate: array<f32>;         // (n, cols) f32
@group(0) @binding(2) var<storage, read> up: array<f32>;           // (n, cols) f32
@group(0) @binding(3) var<storage, read_write> out: array<f32>;    // (n, cols) f32

const GELU_COEF_A: f32 = 0.044715;
const SQRT_2_OVER_PI: f32 = 0.7978845608028654;

fn act(g: f32) -> f32 {
  if (IS_GELU) {
    let u = SQRT_2_OVER_PI * g * (1.0 + GELU_COEF_A * g * g);
    let e = exp(-2.0 * abs(u)); // overflow-free tanh
    return 0.5 * g * (1.0 + sign(u) * (1.0 - e) / (1.0 + e));
  }
  return g / (1.0 + exp(-g));
}

fn index(ids: Ids) -> u32 { return (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid; }

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = index(ids);
  if (g < p.count) { out[g] = act(gate[g]) * up[g]; }
}

@compute @workgroup_size(WG_SIZE)
fn main_out_gate(ids: Ids) {
  let g = index(ids);
  if (g < p.count) { out[g] = act(out[g]) * up[g]; }
}

@compute @workgroup_size(WG_SIZE)
fn main_out_up(ids: Ids) {
  let g = index(ids);
  if (g < p.count) { out[g] = act(gate[g]) * out[g]; }
}

@compute @workgroup_size(WG_SIZE)
fn main_oai(ids: Ids) {
  let g = index(ids);
  if (g < p.count) {
    let x = min(gate[g], 7.0);
    let y = clamp(up[g], -7.0, 7.0);
    out[g] = x / (1.0 + exp(-1.702 * x)) * (y + 1.0);
  }
}

// v rounded to the nearest f16 value, ties to even (|v| < 65504): a multiple of the f16 quantum of v's binade
// (2^(e−10), subnormal 2^−24). Written out because implementations may fold unpack2x16float(pack2x16float(v)) to v.
fn round_f16(v: f32) -> f32 {
  let e = i32((bitcast<u32>(v) >> 23u) & 0xffu) - 127;
  let q = ldexp(1.0, max(e - 10, -24));
  return round(v / q) * q;
}

@compute @workgroup_size(WG_SIZE)
fn main_act(ids: Ids) {
  let g = index(ids);
  if (g < p.count) {
    let v = out[g];
    out[g] = select(select(round_f16(act(round_f16(v))), v, v >= 10.0), 0.0, v <= -10.0);
  }
}
