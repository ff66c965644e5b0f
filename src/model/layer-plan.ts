/**
 * Layer plans: everything one layer's steps take besides the step's tokens (rope and attention parameters, the
 * weights of each step, the activation buffers of the layer's widths), built once at load from the layer records
 * so that the forward pass allocates nothing per token.
 */

import type {
  Activation,
  AttentionParams,
  GluScratch,
  Projection,
  ResidualOptions,
  RmsNormWeight,
  RopeParams,
  Weight,
} from '../backend/ops.js';
import type { MoeStep } from '../backend/moe-step.js';
import type { ModelConfig } from './config.js';
import type { LayerSpec, MoeLayerSpec } from './layer-spec.js';
import { type DeltaNetLayerWeights, type DeltaNetMixerPlan, planDeltaNet } from './delta-net-layer.js';
import type { LayerWeights, MoeWeights, ShortConvLayerWeights } from './model-weights.js';
import { type Mamba2LayerWeights, type Mamba2MixerPlan, planMamba2 } from './mamba2-layer.js';
import { type MlpLayerWeights, type MlpPlan, planMlp } from './mlp-layer.js';
import { widthKey } from './run-shape.js';

/** The gated FFN of a layer plan (the same for every layer kind). */
interface FfnPlan {
  readonly ffnNorm: RmsNormWeight | null;
  /** The dense FFN's weights (null on a MoE layer). */
  readonly gate: Weight | null;
  readonly up: Weight | null;
  readonly down: Weight | null;
  /** The MoE FFN step, or null on a dense layer. */
  readonly moe: MoeStep | null;
  readonly ffnScratch: GluScratch; // normed [ubatch, nEmbd], gate and up [ubatch, ffnDim]
  readonly hidden: Activation; // [ubatch, ffnDim] act(gate) · up (own buffer: glu's output may not alias its inputs)
  /** Down projection → x (post-norm). */
  readonly ffnOut: ResidualOptions;
}

/** One sequence's row of a multi-sequence step, gathered out of (and att scattered back into) the step's rows. */
export interface SequenceRow {
  readonly q: Activation; // [1, nHeads·headDim] of this layer
  readonly k: Activation; // [1, nKvHeads·headDim]
  readonly v: Activation; // [1, nKvHeads·headDim]
  readonly att: Activation; // [1, nHeads·headDim]
}

/** Everything one attention layer's steps take besides the step's tokens, built once at load (the decode loop allocates nothing). */
export interface AttentionLayerPlan extends FfnPlan {
  readonly kind: 'attention';
  readonly w: LayerWeights;
  readonly rope: RopeParams | null;
  readonly attention: AttentionParams;
  readonly attnNorm: RmsNormWeight | null;
  /** Columns each q / k norm covers: headDim, or the whole row (`qkNormScope` 'all-heads'). */
  readonly qNormGroup: number;
  readonly kNormGroup: number;
  /** q, k, v projections of the normalised input. */
  readonly qkv: readonly Projection[];
  readonly q: Activation; // [ubatch, nHeads·headDim] of this layer
  readonly k: Activation; // [ubatch, nKvHeads·headDim] of this layer
  readonly v: Activation; // [ubatch, nKvHeads·headDim] of this layer
  readonly att: Activation; // [ubatch, nHeads·headDim] attention output
  /** Output projection → x (bias, post-norm). */
  readonly attnOut: ResidualOptions;
  /** One-row buffers a multi-sequence step runs one sequence's rope/KV/attention in; null with one slot. */
  readonly seq: SequenceRow | null;
  /** The layer whose KV cache this one attends over (itself unless it shares an earlier layer's). */
  readonly kvSource: number;
  /** The layer projects and stores its own K/V (kvSource is itself). */
  readonly ownKv: boolean;
  /** V is a copy of the K projection (no `attn_v`; gemma4). */
  readonly vFromK: boolean;
  /** Per-layer embedding projection → x (post-norm), when the layer has one. */
  readonly perLayerOut: ResidualOptions;
  /** Gated attention (qwen35): the q projection's per-head [q | gate] rows and the gate split out of them; or null. */
  readonly outputGate: { readonly qg: Activation; readonly gate: Activation } | null;
  /** The Mamba-2 mixer beside the attention (falcon-h1; its ssm_in is among `qkv`), with ssm_out → x; or null. */
  readonly ssm: (Mamba2MixerPlan & { readonly mixerOut: ResidualOptions }) | null;
}

/** The same for a short-convolution layer. */
export interface ShortConvLayerPlan extends FfnPlan {
  readonly kind: 'shortconv';
  readonly w: ShortConvLayerWeights;
  readonly attnNorm: RmsNormWeight;
  /** in_proj of the normalised input → bcx. */
  readonly inProj: readonly Projection[];
  readonly bcx: Activation; // [ubatch, 3·nEmbd] B | C | x
  /** out_proj → x. */
  readonly convOut: ResidualOptions;
}

/** The same for a gated DeltaNet layer (qwen35). */
interface DeltaNetLayerPlan extends FfnPlan, DeltaNetMixerPlan {
  readonly kind: 'deltanet';
  /** ssm_out → x. */
  readonly mixerOut: ResidualOptions;
}

/** The same for a Mamba-2 layer (granitehybrid). */
interface Mamba2LayerPlan extends FfnPlan, Mamba2MixerPlan {
  readonly kind: 'mamba2';
  /** ssm_out → x. */
  readonly mixerOut: ResidualOptions;
}

/** The same for an MLP-only layer (nemotron_h); its FFN fields are empty (the MLP is its own step). */
interface MlpLayerPlan extends FfnPlan, MlpPlan {
  readonly kind: 'mlp';
}

export type LayerPlan = AttentionLayerPlan | ShortConvLayerPlan | DeltaNetLayerPlan | Mamba2LayerPlan | MlpLayerPlan;

/** The activations of a model, by `ActivationShape.key`. */
export type ActivationMap = ReadonlyMap<string, Activation>;

/** The plan of one layer: its rope and attention parameters, its steps' weights and the buffers of its widths. */
export function planLayer(
  c: ModelConfig,
  il: number,
  spec: LayerSpec,
  lw: LayerWeights | ShortConvLayerWeights | DeltaNetLayerWeights | Mamba2LayerWeights | MlpLayerWeights,
  freqFactors: Float32Array | null,
  acts: ActivationMap,
  seq: SequenceRow | null,
): LayerPlan {
  const b = { xb: acts.get('xb')!, xb2: acts.get('xb2')! };
  const widths = { get: (label: string, cols: number): Activation => acts.get(widthKey(label, cols))! };
  const norm = (weight: Weight | null): RmsNormWeight | null => (weight ? { weight, eps: c.normEps } : null);
  const residual = (bias: Weight | null, postNorm: Weight | null): ResidualOptions => ({
    bias,
    postNorm: norm(postNorm),
    scale: c.residualScale,
    scratch: b.xb2,
  });
  const branch = lw.moe?.branch ?? null;
  const ffn: FfnPlan = {
    // gemma4's experts read their own pre-norm; the layer's `ffn_norm` is then the shared expert's.
    ffnNorm: norm(branch?.expertsNorm ?? lw.ffnNorm),
    gate: lw.gate,
    up: lw.up,
    down: lw.down,
    moe:
      spec.moe && lw.moe
        ? planMoe(c, spec.moe, lw.moe, b, widths.get, { ffnNorm: norm(lw.ffnNorm), postFfnNorm: norm(lw.postFfnNorm) })
        : null,
    ffnScratch: { normed: b.xb, gate: widths.get('gate', spec.ffnDim), up: widths.get('up', spec.ffnDim) },
    hidden: widths.get('hidden', spec.ffnDim),
    ffnOut: residual(null, lw.postFfnNorm),
  };
  if (spec.kind === 'deltanet' || ('kind' in lw && lw.kind === 'deltanet')) {
    if (spec.kind !== 'deltanet' || !('kind' in lw) || lw.kind !== 'deltanet') {
      throw new Error('layer plan: layer kind and weights differ');
    }
    const mixer = planDeltaNet(spec, lw, c.normEps, (key) => acts.get(key)!);
    return { ...ffn, ...mixer, kind: 'deltanet', mixerOut: residual(null, null) };
  }
  if (spec.kind === 'mlp' || ('kind' in lw && lw.kind === 'mlp')) {
    if (spec.kind !== 'mlp' || !('kind' in lw) || lw.kind !== 'mlp') {
      throw new Error('layer plan: layer kind and weights differ');
    }
    const mlp = planMlp(lw, c.normEps, widths.get('hidden', spec.ffnDim), residual(null, null));
    return { ...ffn, up: null, down: null, ...mlp, kind: 'mlp' };
  }
  if (spec.kind === 'mamba2' || ('kind' in lw && lw.kind === 'mamba2')) {
    if (spec.kind !== 'mamba2' || !('kind' in lw) || lw.kind !== 'mamba2') {
      throw new Error('layer plan: layer kind and weights differ');
    }
    const mixer = planMamba2(spec.dims, lw, c.normEps, (key) => acts.get(key)!);
    return { ...ffn, ...mixer, kind: 'mamba2', mixerOut: residual(null, null) };
  }
  if (spec.kind === 'shortconv' || 'inProj' in lw) {
    if (spec.kind !== 'shortconv' || !('inProj' in lw)) throw new Error('layer plan: layer kind and weights differ');
    const bcx = widths.get('bcx', 3 * c.embeddingLength);
    return {
      ...ffn,
      kind: 'shortconv',
      w: lw,
      attnNorm: { weight: lw.attnNorm, eps: c.normEps },
      inProj: [{ out: bcx, weight: lw.inProj, bias: null }],
      bcx,
      convOut: residual(null, null),
    };
  }
  const rope: RopeParams | null = spec.rope && {
    kind: c.ropeKind,
    headDim: spec.headDim,
    nRot: spec.rope.nRot,
    theta: spec.rope.theta,
    freqScale: spec.rope.freqScale,
    ...(freqFactors && spec.rope.freqFactors ? { freqFactors } : {}),
    ...(spec.rope.yarn ? { yarn: spec.rope.yarn } : {}),
    ...(c.ropeMulti ? { multi: c.ropeMulti } : {}),
  };
  const attention: AttentionParams = {
    nHeads: spec.nHeads,
    nKvHeads: spec.nKvHeads,
    headDim: spec.headDim,
    scale: c.attentionScale,
    slidingWindow: spec.slidingWindow,
    softcap: c.attnSoftcap,
    ...(c.causalAttention ? {} : { causal: false, ...(c.symmetricWindow ? { symmetricWindow: true } : {}) }),
    ...(lw.sinks ? { sinks: lw.sinks } : {}),
  };
  const qCols = spec.nHeads * spec.headDim;
  const q = widths.get('q', qCols);
  const outputGate = c.attnOutputGate ? { qg: widths.get('qg', 2 * qCols), gate: widths.get('q_gate', qCols) } : null;
  const kvCols = spec.nKvHeads * spec.headDim;
  const k = widths.get('k', kvCols);
  const v = widths.get('v', kvCols);
  const allHeads = c.qkNormScope === 'all-heads';
  const ownKv = spec.kvSource === il;
  const vFromK = ownKv && lw.wv === null;
  if (ownKv && lw.wk === null) throw new Error(`layer plan: layer ${il} stores KV but has no K projection`);
  const projections: Projection[] = [{ out: outputGate?.qg ?? q, weight: lw.wq, bias: lw.bq }];
  if (ownKv && lw.wk) projections.push({ out: k, weight: lw.wk, bias: lw.bk });
  if (ownKv && lw.wv) projections.push({ out: v, weight: lw.wv, bias: lw.bv });
  if (spec.ssm && !(lw.ssm && lw.attnNorm)) throw new Error(`layer plan: layer ${il} has no parallel Mamba-2 weights`);
  const ssm =
    spec.ssm && lw.ssm && lw.attnNorm
      ? {
          ...planMamba2(spec.ssm, { ...lw.ssm, attnNorm: lw.attnNorm }, c.normEps, (key) => acts.get(key)!),
          mixerOut: residual(null, null),
        }
      : null;
  if (ssm) projections.push(...ssm.proj); // ssm_in of the same normed input
  return {
    ...ffn,
    kind: 'attention',
    w: lw,
    rope,
    attention,
    attnNorm: norm(lw.attnNorm),
    qNormGroup: allHeads ? qCols : spec.headDim,
    kNormGroup: allHeads ? spec.nKvHeads * spec.headDim : spec.headDim,
    qkv: projections,
    q,
    k,
    v,
    att: widths.get('att', qCols),
    attnOut: residual(lw.bo, lw.postAttnNorm),
    seq,
    kvSource: spec.kvSource,
    ownKv,
    vFromK,
    perLayerOut: residual(null, lw.perLayer?.postNorm ?? null),
    outputGate,
    ssm,
  };
}

/** The MoE step of one layer: its weights, routing and the buffers of its widths (see `activationShapes`). */
function planMoe(
  c: ModelConfig,
  m: MoeLayerSpec,
  w: MoeWeights,
  b: { readonly xb: Activation; readonly xb2: Activation },
  get: (label: string, cols: number) => Activation,
  layerNorms: { readonly ffnNorm: RmsNormWeight | null; readonly postFfnNorm: RmsNormWeight | null },
): MoeStep {
  const sh = w.shared;
  const br = w.branch;
  const eps = c.normEps;
  return {
    router: w.router,
    gate: w.gate,
    up: w.up,
    down: w.down,
    nExperts: m.nExperts,
    route: {
      gating: m.gating,
      normWeights: m.normWeights,
      scale: m.weightsScale,
      selectionBias: w.selectionBias,
      expertScale: w.expertScale,
    },
    routerNorm: br && { weight: br.routerNorm, eps, scale: Math.fround(1 / Math.sqrt(c.embeddingLength)) },
    expertsPostNorm: br && { weight: br.expertsPostNorm, eps },
    // The layer's post-FFN norm covers the whole MoE output (gemma4; no other MoE architecture has post-norms).
    outNorm: layerNorms.postFfnNorm,
    gateUp: m.fusedGateUp ? get('moe_gate_up', 2 * m.expertDim) : null,
    activation: c.moe?.oai ? 'swiglu-oai' : m.ungated ? 'relu2' : c.activation,
    routerBias: w.routerBias,
    expertBias: w.expertBias,
    residualScale: c.residualScale,
    shared: sh && {
      gate: sh.gate,
      up: sh.up,
      down: sh.down,
      gateInp: sh.gateInp,
      norm: br ? layerNorms.ffnNorm : null,
      postNorm: br && { weight: br.sharedPostNorm, eps },
      scratch: {
        gate: get('gate', sh.gate.nRows),
        up: get('up', sh.gate.nRows),
        hidden: get('hidden', sh.gate.nRows),
        logit: get('moe_shared_logit', 1),
      },
    },
    scratch: {
      normed: b.xb,
      logits: get('moe_logits', m.nExperts),
      ids: get('moe_ids', m.nUsed),
      weights: get('moe_weights', m.nUsed),
      gate: get('moe_gate', m.expertDim),
      up: get('moe_up', m.expertDim),
      hidden: get('moe_hidden', m.expertDim),
      down: get('moe_down', c.embeddingLength),
      out: b.xb2,
    },
  };
}
