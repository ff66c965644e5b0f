/**
 * Entry of the WASM kernel module (AssemblyScript). Built eight ways by scripts/build-wasm.mjs — scalar, simd128,
 * relaxed-simd, relaxed-dot, each also as a shared-memory (threads) twin — into wasm/build/. Export names match the WGSL kernels.
 * The module imports its memory (env.memory) and allocates nothing: the host places every buffer.
 */
export { quantize_q8 } from './q8-activations';
export { gemv_q4_0, gemv_q4_1, gemv_q5_0, gemv_q5_1, gemv_q8_0 } from './gemv-q32';
export { gemv_q4_k, gemv_q5_k, gemv_q6_k } from './gemv-k-quants';
export { gemv_mxfp4 } from './gemv-mxfp4';
export { gemv_f32, gemv_f16, gemv_bf16 } from './gemv-float';
export { attention_f32, attention_heads } from './attention';
export { attention_kv, attention_kv_heads } from './attention-kv';
export { attention_split_heads } from './attention-split';
export { widen_f16_rows } from './attention-widen';
export { f16_round, f16_store_rows } from './kv-f16-rows';
export { glu_f32 } from './glu';
export { interleave_row_pairs } from './row-pairs';
export { argmax_f32, topk_f32 } from './argmax';
export { gemv_q4_0_r4, rows4_kernels } from './gemv-stored-rows4';
export { gemv_q4_0_r4x } from './gemv-q4-0-tiles';
export { splat_q8_x4 } from './splat-driver';
export { gemv_q8_0_r4 } from './gemv-q8-rows4';
export { interleave_rows4 } from './rows4-layout';
export { gemv_q4_k_r4 } from './gemv-q4-k-rows4';
export { gemv_q5_0_r4 } from './gemv-q5-rows4';
export { gemv_q6_k_r4 } from './gemv-q6-k-rows4';
export { gemv_q5_k_r4 } from './gemv-q5-k-rows4';
export { delta_net_heads } from './delta-net-scan';
export { mamba2_heads } from './mamba2-scan';
export { conv_silu, l2norm_heads, gated_norm_heads } from './recurrent-conv';
export { short_conv } from './short-conv';
export { gemm_f16, gemm_f32 } from './gemm-float';
export { attention_pair_heads, attention_pair_window_heads } from './attention-pair';
export { gelu_f16_rows, layer_norm_rows } from './encoder-rows';
export { add_rows, rms_norm_rows } from './row-ops';
export { rope_rows } from './rope';
export { moe_combine } from './moe-combine';
