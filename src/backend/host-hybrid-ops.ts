/**
 * What the host backends (cpu, wasm) share for hybrid models: the per-slot recurrent state in host memory and the
 * ops of qwen35's layers that run over it as plain TypeScript (gated DeltaNet, gated attention's head split and
 * sigmoid gate), lfm2's short convolution, gpt-oss's expert biases and clamped SwiGLU and gemma3n's AltUp primitives,
 * each backend only saying where its values live (`view`). A step of several sequences (`StepBatch.sequences`) runs
 * the recurrent ops row by row, each row on its own slot's state (`step-sequences.ts`).
 */

import { HostAltUp } from './altup-host.js';
import type { AltUpPrimitives } from './altup-primitives.js';
import { CompositeOps } from './composite-ops.js';
import { deltaNetStateSize, type HostView, hostDeltaNet, hostMulSigmoid, hostSplitHeadPairs } from './delta-net.js';
import { hostMamba2, type Mamba2Inputs, type Mamba2Weights, mamba2StateSize } from './mamba2.js';
import type { Activation, RecurrentStateSpec, StepBatch, Weight } from './ops.js';
import type { DeltaNetInputs, DeltaNetWeights } from './delta-net-types.js';
import { HostRecurrentState, type ShortConvArgs, shortConvRows } from './short-conv.js';
import { forEachSequence } from './step-sequences.js';
import type { RecurrentKernels } from './recurrent-scan.js';
import { type AddRow, hostAddExpertBias } from './expert-bias.js';
import { hostSwigluOai } from './swiglu-oai.js';
import { checkRows } from './set-rows.js';
import { hostGelu, hostLayerNorm } from './host-encoder-ops.js';

/** `CompositeOps` plus the recurrent state and hybrid-layer ops of a backend whose memory the host reads. */
export abstract class HostHybridOps extends CompositeOps {
  readonly recurrentRows = true;
  protected recurrent = new HostRecurrentState();
  /** The backend's native scans (WASM SIMD), null: the plain-TS ones (recurrent-scan.ts). */
  private kernels: RecurrentKernels | null = null;
  /** The backend's native row add for `addExpertBias` (indices into `view`'s array), null: a plain-TS loop. */
  protected addRow: AddRow | null = null;
  /** gemma3n's AltUp primitives over this backend's values (`view` is read at call time: subclasses set it). */
  readonly altUp: AltUpPrimitives = new HostAltUp(
    (t) => this.view(t),
    (a) => this.written(a),
  );
  /** The step in progress (throws outside beginStep … endStep). */
  protected abstract step(): StepBatch;
  /** Where an activation's (or an f32 weight's) values are. */
  protected abstract readonly view: HostView;
  /** Marks an activation written (the wasm backend versions them). */
  protected written(_a: Activation): void {}

  setRows(out: Activation, rows: Float32Array, n: number): void {
    checkRows(out, rows, n);
    const [data, at] = this.view(out);
    data.set(rows.subarray(0, n * out.cols), at);
    this.written(out);
  }

  deltaNet(out: Activation, x: DeltaNetInputs, layer: number, n: number, w: DeltaNetWeights, eps: number): void {
    this.placeWeights(w.conv, w.dtBias, w.a, w.norm);
    forEachSequence(
      this.step(),
      this.view,
      n,
      [out, x.mixed, x.z, x.beta, x.alpha, x.conv],
      (view, slot, fresh, rows) => {
        const state = this.recurrent.layer(slot, layer, deltaNetStateSize(w.dims));
        hostDeltaNet(view, out, x, rows, w, eps, state, fresh, this.kernels);
      },
    );
    for (const a of [out, x.conv, x.alpha, x.beta]) this.written(a);
  }

  mamba2(out: Activation, x: Mamba2Inputs, layer: number, n: number, w: Mamba2Weights, eps: number): void {
    this.placeWeights(w.conv, w.convBias, w.dtBias, w.a, w.d, w.norm);
    forEachSequence(this.step(), this.view, n, [out, x.zxbcdt, x.conv], (view, slot, fresh, rows) => {
      const state = this.recurrent.layer(slot, layer, mamba2StateSize(w.dims));
      hostMamba2(view, out, x, rows, w, eps, state, fresh, this.kernels);
    });
    for (const a of [out, x.conv, x.zxbcdt]) this.written(a);
  }

  shortConv(out: Activation, bcx: Activation, layer: number, n: number, kernel: Weight): void {
    this.placeWeights(kernel);
    const [taps, channels] = [kernel.rowLength, kernel.nRows];
    forEachSequence(this.step(), this.view, n, [out, bcx], (view, slot, fresh, rows) => {
      const [[o, outAt], [b, bcxAt], [k, kernelAt]] = [view(out), view(bcx), view(kernel)];
      const state = this.recurrent.layer(slot, layer, (taps - 1) * channels); // [taps − 1, C]
      const strides = { outStride: out.cols, bcxStride: bcx.cols, channels, taps };
      this.shortConvRows({ out: o, outAt, bcx: b, bcxAt, kernel: k, kernelAt, state, n: rows, fresh, ...strides });
    });
    this.written(out);
  }

  /** One short convolution over f32 arrays (the wasm backend overrides it with its SIMD kernel). */
  protected shortConvRows(a: ShortConvArgs): void {
    shortConvRows(a);
  }

  /**
   * Locates the op's small weights before its state is taken: the first `view` of a weight not stored as f32 places an
   * f32 copy (wasm), which may grow the memory and so detach a state view taken before it (whose byteOffset then
   * reads 0: the scan would write at address 0).
   */
  private placeWeights(...weights: (Weight | null)[]): void {
    for (const w of weights) if (w) this.view(w);
  }

  /** Runs the DeltaNet and Mamba-2 scans on `kernels`, the recurrent state placed where they read it (before loading). */
  useRecurrentKernels(kernels: RecurrentKernels): void {
    this.kernels = kernels;
    this.recurrent = new HostRecurrentState((size, what) => kernels.stateArray(size, what));
  }

  reluSquared(x: Activation, n: number): void {
    const [d, at] = this.view(x);
    for (let i = at; i < at + n * x.cols; i++) {
      const r = Math.max(d[i], 0);
      d[i] = Math.fround(r * r);
    }
    this.written(x);
  }

  clamp(x: Activation, lo: number, hi: number, n: number): void {
    const [d, at] = this.view(x);
    const [l, h] = [Math.fround(lo), Math.fround(hi)];
    for (let i = at; i < at + n * x.cols; i++) d[i] = Math.min(Math.max(d[i], l), h);
    this.written(x);
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

  addExpertBias(out: Activation, bias: Weight, ids: Activation, n: number): void {
    hostAddExpertBias(this.view, out, bias, ids, n, this.addRow);
    this.written(out);
  }

  swigluOai(out: Activation, gate: Activation, up: Activation, n: number): void {
    hostSwigluOai(this.view, out, gate, up, n);
    this.written(out);
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
