// store_kv: writes k and v rows ([n, kv_cols] f32) into one layer's cache (F: f16 on the f16 path, else f32) at
// element offset dst (= (slot·context_length + start_pos)·kv_cols). Dispatch: 1-D over n·kv_cols, (gx, gy).
// Reference: CpuOps.storeKv (exact on the f32 path; f16 rounding on the f16 path).

struct Params {
  count: u32, // n · kv_cols
  dst: u32,   // first cache element
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> k: array<f32>;              // (n, kv_cols) f32
@group(0) @binding(2) var<storage, read> v: array<f32>;              // (n, kv_cols) f32
@group(0) @binding(3) var<storage, read_write> k_cache: array<F>;    // (n_slots, context_length, kv_cols) F
@group(0) @binding(4) var<storage, read_write> v_cache: array<F>;    // (n_slots, context_length, kv_cols) F

@compute @workgroup_size(WG_SIZE)
fn main(ids: Ids) {
  let g = (ids.wg.y * ids.nwg.x + ids.wg.x) * WG_SIZE + ids.lid;
  if (g >= p.count) { return; }
  k_cache[p.dst + g] = F(k[g]);
  v_cache[p.dst + g] = F(v[g]);
}
