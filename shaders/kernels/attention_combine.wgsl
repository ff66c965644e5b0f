// attention_combine: merges the n_splits partial results of attention.wgsl for each (row, head):
// M = max m_s, L = Σ l_s·e^(m_s − M), out[d] = Σ acc_s[d]·e^(m_s − M) / L (empty splits have l_s = 0).
// With has_sinks (gpt-oss) head h's sink logit joins the softmax as one more term: M includes it, L += e^(sink − M).
// Dispatch: (n_heads, n) workgroups; invocations stride over head_dim. Reference: cpu/attention.ts.

struct Params {
  n_heads: u32,
  head_dim: u32,
  n_splits: u32,
  q_stride: u32,
  has_sinks: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> partial: array<f32>;        // (n, n_heads, n_splits, head_dim + 2) f32
@group(0) @binding(2) var<storage, read_write> out: array<f32>;      // (n, n_heads·head_dim) f32
@group(0) @binding(3) var<storage, read> sinks: array<f32>;          // (n_heads) f32 sink logits, has_sinks

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let h = ids.wg.x;
  let i = ids.wg.y;
  let hd = p.head_dim;
  let pb = (i * p.n_heads + h) * p.n_splits * (hd + 2u);
  var mx = -3.0e38;
  for (var s = 0u; s < p.n_splits; s++) { mx = max(mx, partial[pb + s * (hd + 2u)]); }
  var l = 0.0;
  if (p.has_sinks != 0u) {
    mx = max(mx, sinks[h]);
    l = exp(sinks[h] - mx);
  }
  for (var s = 0u; s < p.n_splits; s++) {
    let b = pb + s * (hd + 2u);
    l += partial[b + 1u] * exp(partial[b] - mx);
  }
  for (var d = ids.lid; d < hd; d += WG_SIZE) {
    var a = 0.0;
    for (var s = 0u; s < p.n_splits; s++) {
      let b = pb + s * (hd + 2u);
      a += partial[b + 2u + d] * exp(partial[b] - mx);
    }
    out[i * p.q_stride + h * hd + d] = a / l;
  }
}
