/**
 * WGSL that only some models or devices need — the recurrent layer kinds (DeltaNet, Mamba-2, short convolution),
 * mixture-of-experts routing and gather matmuls, Gemma 3n's AltUp, the IQ1–IQ3 quant snippets, the
 * subgroup-matrix prefill gemm and the software adapters' gemv_bcast with its `dot32` block products (CPU
 * implementations of WebGPU; gemv_id_dot, a MoE kernel, reads them too) — kept out of the main download: compose.ts imports this module on demand
 * (`loadFeatureShaders`), so a page chatting with a dense transformer never fetches it. The list of files is
 * FEATURE_SHADER_GLOBS; compose.ts's eager glob excludes the same files.
 */

/** Every feature WGSL file, by path relative to shaders/ without `.wgsl` (as compose.ts names shaders). */
export const FEATURE_SHADERS: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(
      [
        '../../../shaders/kernels/{delta_net,mamba2,short_conv,gated_attn,relu_sqr,layer_norm,moe_route,moe_combine,gemv_id,gemv_id_dot,altup,gemm_sm,rope_multi,gemv_bcast}.wgsl',
        '../../../shaders/matrix/*.wgsl',
        '../../../shaders/quant/iq{1,2,3}_*.wgsl',
        '../../../shaders/quant/*dot32.wgsl',
      ],
      { query: '?raw', import: 'default', eager: true },
    ),
  ).map(([path, src]) => [path.replace(/^.*\/shaders\//, '').replace(/\.wgsl$/, ''), src]),
);
