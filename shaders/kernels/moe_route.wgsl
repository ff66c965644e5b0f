// moe_route: mixture-of-experts routing, one invocation per token (ggml build_moe_ffn): probabilities of the router
// logits (softmax with the max subtracted, or a sigmoid per expert), the n_used most probable experts (highest
// first, ties to the lower index; selected on the logits, which both gatings order alike), their probabilities as
// weights (with HAS_BIAS, experts are selected by probability + bias[e], weighted by the probability), divided by their sum (clamped below at 2^-14) when NORM_WEIGHTS, times `scale`, then (HAS_SCALE) times
// the expert's own expert_scale[e] (gemma4's ffn_down_exps.scale). Ids are written as f32.
// Dispatch: 1-D over tokens, (gx, gy). Reference: CpuOps.moeRoute (backend/moe-route.ts).

override IS_SIGMOID: bool = false;
override IS_SOFTMAX_WEIGHT: bool = false; // gpt-oss: select on the logits, weights = softmax of the selected logits
override NORM_WEIGHTS: bool = false;
override HAS_BIAS: bool = false;
override HAS_SCALE: bool = false;

struct Params {
  n: u32,            // tokens
  n_experts: u32,
  n_used: u32,
  scale: f32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;        // (n, n_experts) f32
@group(0) @binding(2) var<storage, read_write> ids: array<f32>;     // (n, n_used) expert ids as f32
@group(0) @binding(3) var<storage, read_write> weights: array<f32>; // (n, n_used) f32
@group(0) @binding(4) var<storage, read> bias: array<f32>;          // (n_experts) f32 selection bias, HAS_BIAS
@group(0) @binding(5) var<storage, read> expert_scale: array<f32>;  // (n_experts) f32 per-expert weight scale, HAS_SCALE

fn prob(l: f32, mx: f32, sum: f32) -> f32 {
  if (IS_SOFTMAX_WEIGHT) { return l; }
  if (IS_SIGMOID) { return 1.0 / (1.0 + exp(-l)); }
  return exp(l - mx) * (1.0 / sum);
}

fn is_taken(at: u32, k: u32, e: u32) -> bool {
  for (var j = 0u; j < k; j++) { if (u32(ids[at + j]) == e) { return true; } }
  return false;
}

@compute @workgroup_size(WG_SIZE)
fn main(gid: Ids) {
  let t = (gid.wg.y * gid.nwg.x + gid.wg.x) * WG_SIZE + gid.lid;
  if (t >= p.n) { return; }
  let lb = t * p.n_experts;
  let at = t * p.n_used;
  var mx = -3.0e38;
  for (var e = 0u; e < p.n_experts; e++) { mx = max(mx, logits[lb + e]); }
  var sum = 0.0;
  if (!IS_SIGMOID && !IS_SOFTMAX_WEIGHT) { for (var e = 0u; e < p.n_experts; e++) { sum += exp(logits[lb + e] - mx); } }
  var total = 0.0;
  for (var k = 0u; k < p.n_used; k++) {
    var best = 0xffffffffu;
    var best_v = 0.0;
    for (var e = 0u; e < p.n_experts; e++) {
      var v = logits[lb + e]; // without a bias the logits order the experts as their probabilities do
      if (HAS_BIAS) { v = prob(v, mx, sum) + bias[e]; }
      if ((best == 0xffffffffu || v > best_v) && !is_taken(at, k, e)) { best = e; best_v = v; }
    }
    let pr = prob(logits[lb + best], mx, sum);
    ids[at + k] = f32(best);
    weights[at + k] = pr;
    total += pr;
  }
  if (IS_SOFTMAX_WEIGHT) {
    var top = -3.0e38;
    for (var k = 0u; k < p.n_used; k++) { top = max(top, weights[at + k]); }
    var s = 0.0;
    for (var k = 0u; k < p.n_used; k++) { let e = exp(weights[at + k] - top); weights[at + k] = e; s += e; }
    let inv = 1.0 / s;
    for (var k = 0u; k < p.n_used; k++) { weights[at + k] = weights[at + k] * inv; }
    total = 1.0;
  }
  let denom = select(1.0, max(total, 6.103515625e-5), NORM_WEIGHTS);
  for (var k = 0u; k < p.n_used; k++) {
    var w = weights[at + k] / denom * p.scale;
    if (HAS_SCALE) { w = w * expert_scale[u32(ids[at + k])]; }
    weights[at + k] = w;
  }
}
