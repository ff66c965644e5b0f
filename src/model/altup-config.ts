/**
 * gemma3n's AltUp / LAuReL / activation-sparsity hyper-parameters as llama.cpp uses them (`llama_hparams` n_altup,
 * i_altup_act; `models.h` n_layer_sparsity = 10, f_sparsity_std_mul = Φ⁻¹(0.95)): the residual stream is `nInputs`
 * parallel streams of which `activeIdx` runs through each layer; the first layers' FFN gates are sparsified.
 */

/** The AltUp configuration of a model (null on every other architecture). */
export interface AltUpConfig {
  /** Parallel residual streams (`altup.num_inputs`, 4). */
  readonly nInputs: number;
  /** The stream each layer computes on (`altup.active_idx`, 0). */
  readonly activeIdx: number;
  /**
   * Per layer: the std multiplier z of the gaussian top-k on the FFN gate (cutoff mean + z·std), or null for a dense
   * gate ([nLayers]).
   */
  readonly sparsity: readonly (number | null)[];
}

/** Layers whose FFN gate is sparsified (llama.cpp `n_layer_sparsity`). */
export const SPARSE_LAYERS = 10;
/** The std multiplier of those layers: the standard normal's 0.95 quantile as f32 (`f_sparsity_std_mul`). */
export const SPARSITY_STD_MUL = 1.6448533535003662;
/** Layers with KV of their own; later ones reuse layer 18's (sliding) or 19's (global) KV (`n_layer_kv_from_start`). */
export const KV_LAYERS_FROM_START = 20;
