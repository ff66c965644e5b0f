/**
 * What the host backends (cpu, wasm) share for hybrid models: the per-slot recurrent state in host memory and the
 * ops of qwen35's layers that run over it as plain TypeScript (gated DeltaNet, gated attention's head split and
 * sigmoid gate), each backend only saying where its values live (`view`).
 */

import { CompositeOps } from './composite-ops.js';
import { deltaNetStateSize, type HostView, hostDeltaNet, hostMulSigmoid, hostSplitHeadPairs } from './delta-net.js';
import type { Activation, DeltaNetInputs, DeltaNetWeights, RecurrentStateSpec, StepBatch, Weight } from './ops.js';
import { HostRecurrentState } from './short-conv.js';
import { hostGelu, hostLayerNorm } from './host-encoder-ops.js';

/** `CompositeOps` plus the recurrent state and hybrid-layer ops of a backend whose memory the host reads. */
export abstract class HostHybridOps extends CompositeOps {
  protected readonly recurrent = new HostRecurrentState();
  /** The step in progress (throws outside beginStep … endStep). */
  protected abstract step(): StepBatch;
  /** Where an activation's (or an f32 weight's) values are. */
  protected abstract readonly view: HostView;
  /** Marks an activation written (the wasm backend versions them). */
  protected written(_a: Activation): void {}

  deltaNet(out: Activation, x: DeltaNetInputs, layer: number, n: number, w: DeltaNetWeights, eps: number): void {
    const { slot, startPos } = this.step();
    const state = this.recurrent.layer(slot, layer, deltaNetStateSize(w.dims));
    hostDeltaNet(this.view, out, x, n, w, eps, state, startPos === 0);
    this.written(out);
  }

  splitHeadPairs(q: Activation, gate: Activation, qg: Activation, n: number, headDim: number): void {
    hostSplitHeadPairs(this.view, q, gate, qg, n, headDim);
    this.written(q);
    this.written(gate);
  }

  mulSigmoid(x: Activation, gate: Activation, n: number): void {
    hostMulSigmoid(this.view, x, gate, n);
    this.written(x);
  }

  layerNorm(out: Activation, x: Activation, weight: Weight | null, bias: Weight | null, eps: number, n: number): void {
    hostLayerNorm(this.view, out, x, weight, bias, eps, n);
    this.written(out);
  }

  gelu(x: Activation, n: number): void {
    hostGelu(this.view, x, n);
    this.written(x);
  }

  createRecurrentState(spec: RecurrentStateSpec): void {
    this.recurrent.create(spec);
  }

  copyRecurrentState(srcSlot: number, dstSlot: number): void {
    this.recurrent.copy(srcSlot, dstSlot);
  }

  async readRecurrentState(slot: number): Promise<Float32Array> {
    return this.recurrent.read(slot);
  }

  writeRecurrentState(slot: number, state: Float32Array): void {
    this.recurrent.write(slot, state);
  }
}
