/**
 * The WebGPU ops of the layer kinds beside attention and the dense FFN — mixture-of-experts routing and expert
 * matmuls, short convolutions, gated DeltaNet, Mamba-2 — and the recurrent state they keep per sequence: each a
 * delegation to its helper (moe-ops, recurrent-state-ops, delta-net-ops, mamba2-ops). WebGpuOps extends this class and
 * supplies the helpers, the step and the flushing.
 */

import { CompositeOps } from '../composite-ops.js';
import type { DeltaNetInputs, DeltaNetWeights } from '../delta-net-types.js';
import type { Mamba2Inputs, Mamba2Weights } from '../mamba2.js';
import type { MoeRouteParams } from '../moe-step.js';
import type { Activation, RecurrentStateSpec, Weight } from '../ops.js';
import type { DeltaNetOps } from './delta-net-ops.js';
import type { GpuActivation } from './gpu-resources.js';
import type { Mamba2Ops } from './mamba2-ops.js';
import type { MoeOps } from './moe-ops.js';
import type { RecurrentStateOps, RecurrentStep } from './recurrent-state-ops.js';

/** See the file header. */
export abstract class WebGpuLayerKindOps extends CompositeOps {
  readonly recurrentRows = true; // shortConv, deltaNet and mamba2 run per sequence of a multi-sequence step
  protected abstract readonly moe: MoeOps; // mixture-of-experts routing, gather matmul and sums
  protected abstract readonly recurrent: RecurrentStateOps; // (nSlots, Σ layer sizes) f32 recurrent state
  protected abstract readonly dn: DeltaNetOps; // qwen35's DeltaNet and gated-attention dispatches
  protected abstract readonly m2: Mamba2Ops; // the Mamba-2 dispatches (granitehybrid, nemotron_h, falcon-h1)
  /** The step being recorded, or a clear error outside beginStep … endStep. */
  protected abstract requireStep(op: string): RecurrentStep;
  /** Records pending GEMV groups, so that what follows sees their outputs. */
  protected abstract settle(): void;
  /** Schedules a submission of recorded work when no step is being recorded. */
  protected abstract flushIfIdle(): void;

  moeRoute(ids: Activation, weights: Activation, logits: Activation, n: number, params: MoeRouteParams): void {
    this.moe.route(ids, weights, logits, n, params);
  }

  matmulExperts(
    out: Activation,
    x: Activation,
    w: Weight,
    nExperts: number,
    ids: Activation,
    n: number,
    xPerSlot: boolean,
  ): void {
    this.moe.matmulExperts(out, x, w, nExperts, ids, n, xPerSlot);
  }

  moeCombine(out: Activation, y: Activation, weights: Activation, n: number): void {
    this.moe.combine(out, y, weights, n);
  }

  addExpertBias(out: Activation, bias: Weight, ids: Activation, n: number): void {
    this.moe.addExpertBias(out, bias, ids, n);
  }

  swigluOai(out: Activation, gate: Activation, up: Activation, n: number): void {
    this.moe.swigluOai(out, gate, up, n);
  }

  sigmoidGatedAdd(out: Activation, y: Activation, gate: Activation, n: number): void {
    this.moe.sigmoidGatedAdd(out, y, gate, n);
  }

  shortConv(out: Activation, bcx: Activation, layer: number, n: number, kernel: Weight): void {
    this.recurrent.shortConv(
      this.requireStep('shortConv'),
      out as GpuActivation,
      bcx as GpuActivation,
      layer,
      n,
      kernel,
    );
  }

  deltaNet(out: Activation, x: DeltaNetInputs, layer: number, n: number, w: DeltaNetWeights, eps: number): void {
    this.dn.deltaNet(this.requireStep('deltaNet'), out as GpuActivation, x, layer, n, w, eps);
  }

  mamba2(out: Activation, x: Mamba2Inputs, layer: number, n: number, w: Mamba2Weights, eps: number): void {
    this.m2.record(this.requireStep('mamba2'), out as GpuActivation, x, layer, n, w, eps);
  }

  reluSquared(x: Activation, n: number): void {
    this.m2.reluSquared(this.requireStep('reluSquared'), x as GpuActivation, n);
  }

  splitHeadPairs(q: Activation, gate: Activation, qg: Activation, n: number, headDim: number): void {
    this.requireStep('splitHeadPairs');
    this.dn.splitHeadPairs(q as GpuActivation, gate as GpuActivation, qg as GpuActivation, n, headDim);
  }

  mulSigmoid(x: Activation, gate: Activation, n: number): void {
    this.requireStep('mulSigmoid');
    this.dn.mulSigmoid(x as GpuActivation, gate as GpuActivation, n);
  }

  createRecurrentState(spec: RecurrentStateSpec): void {
    this.recurrent.create(spec);
  }

  copyRecurrentState(srcSlot: number, dstSlot: number): void {
    if (this.recurrent.copy(srcSlot, dstSlot)) this.flushIfIdle();
  }

  readRecurrentState(slot: number): Promise<Float32Array> {
    this.settle();
    return this.recurrent.read(slot);
  }

  writeRecurrentState(slot: number, state: Float32Array): void {
    this.settle();
    this.recurrent.write(slot, state);
  }
}
