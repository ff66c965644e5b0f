/**
 * Per-layer token embeddings (gemma4, llama.cpp `build_inp_per_layer` / `project_per_layer_inputs`): before the
 * first layer, each layer l gets its own input
 *   in_l = (√nPL · per_layer_token_embd[token][l] + rmsNorm(per_layer_model_proj_l · x₀ / √nEmbd) · proj_norm) / √2
 * from the scaled token embedding x₀; after layer l's FFN the residual stream takes
 *   x += post_norm(proj_l · (gelu(inp_gate_l · x) ⊙ in_l)).
 * The tables come split per layer at load (column blocks of `per_layer_token_embd`, row blocks of
 * `per_layer_model_proj`), so every step here is an existing `Ops` call on whole buffers.
 */

import type { Activation, Ops, ResidualOptions, Weight } from '../backend/ops.js';

/** The model-wide per-layer embedding weights, split by layer at load. */
export interface PerLayerWeights {
  /** Layer l's columns of `per_layer_token_embd`: [vocab rows, nPL] each. */
  readonly tokenEmbd: readonly Weight[];
  /** Layer l's rows of `per_layer_model_proj`: [nPL rows, nEmbd] each. */
  readonly modelProj: readonly Weight[];
  readonly projNorm: Weight; // [nPL]
}

/** One layer's gate into its per-layer input and the projection back (`inp_gate`, `proj`, `post_norm`). */
export interface PerLayerBlockWeights {
  readonly gate: Weight; // [nPL rows, nEmbd]
  readonly proj: Weight; // [nEmbd rows, nPL]
  readonly postNorm: Weight; // [nEmbd]
}

/** Label and width of each buffer `PerLayerInput` takes (for the activation plan). */
export function perLayerActivations(nLayers: number, width: number): { key: string; cols: number }[] {
  return [
    ...Array.from({ length: nLayers }, (_, il) => ({ key: `ple_in:${il}`, cols: width })),
    { key: 'ple_a', cols: width },
    { key: 'ple_b', cols: width },
  ];
}

/** The per-layer inputs of one model on one backend. */
export class PerLayerInput {
  private readonly inputs: readonly Activation[]; // [ubatch, nPL] per layer
  private readonly a: Activation; // [ubatch, nPL] scratch
  private readonly b: Activation; // [ubatch, nPL] scratch
  private readonly embdScale: number;
  private readonly projScale: number;

  constructor(
    private readonly w: PerLayerWeights,
    private readonly eps: number,
    nEmbd: number,
    act: (key: string) => Activation,
  ) {
    this.inputs = w.tokenEmbd.map((_, il) => act(`ple_in:${il}`));
    this.a = act('ple_a');
    this.b = act('ple_b');
    this.embdScale = Math.fround(Math.sqrt(w.projNorm.rowLength));
    this.projScale = Math.fround(1 / Math.fround(Math.sqrt(nEmbd)));
  }

  /** Computes every layer's input from the step's tokens and the scaled token embeddings x0 ([n, nEmbd]). */
  project(ops: Ops, x0: Activation, n: number): void {
    const inputScale = Math.fround(1 / Math.fround(Math.SQRT2));
    for (let il = 0; il < this.inputs.length; il++) {
      const inp = this.inputs[il];
      ops.embed(inp, this.w.tokenEmbd[il], n); // in [n, nPL]
      ops.scale(inp, this.embdScale, n);
      ops.matmul(this.a, x0, this.w.modelProj[il], n); // a [n, nPL]
      ops.scale(this.a, this.projScale, n);
      ops.rmsNorm(this.a, this.a, this.w.projNorm, this.eps, n);
      ops.add(inp, inp, this.a, n);
      ops.scale(inp, inputScale, n);
    }
  }

  /** x += post_norm(proj · (gelu(gate · x) ⊙ in_l)) for layer il; `residual.scratch` is overwritten. */
  apply(ops: Ops, il: number, x: Activation, n: number, lw: PerLayerBlockWeights, residual: ResidualOptions): void {
    ops.matmul(this.a, x, lw.gate, n); // a [n, nPL]
    ops.glu(this.b, this.a, this.inputs[il], n, 'gelu'); // b = gelu(a) · in_l
    ops.matmulResidual(x, this.b, lw.proj, n, residual); // x [n, nEmbd] += post_norm(b · projᵀ)
  }

  /** out = post_norm(proj · (gelu(gate · x) ⊙ in_l)) for layer il (gemma3n adds it to its AltUp streams). */
  delta(ops: Ops, il: number, out: Activation, x: Activation, n: number, lw: PerLayerBlockWeights): void {
    ops.matmul(this.a, x, lw.gate, n); // a [n, nPL]
    ops.glu(this.b, this.a, this.inputs[il], n, 'gelu'); // b = gelu(a) · in_l
    ops.matmul(out, this.b, lw.proj, n); // out [n, nEmbd]
    ops.rmsNorm(out, out, lw.postNorm, this.eps, n);
  }
}
