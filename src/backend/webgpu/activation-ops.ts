/**
 * The ops that read activations and vectors but no matrix and no KV cache: embedding lookup, RMSNorm, RoPE, GLU,
 * add, scale / softcap and row copies, each one dispatch (embed: one per weight part). Used by WebGpuOps through a
 * narrow host interface.
 */

import { LlmError } from '../../errors.js';
import type { Activation, GluActivation, RopeParams, Weight } from '../ops.js';
import type { RopeSections } from '../rope-multi.js';
import type { GpuActivation, GpuWeight } from './gpu-resources.js';
import type { KvStep } from './kv-cache-ops.js';
import type { CachedPipeline, PipelineSpec } from './pipelines.js';
import type { RopePositions } from './rope-positions.js';
import { ropeYarnUniforms } from './rope-table.js';
import { type Binding, grid, type StepRecorder } from './step-recorder.js';
import type { GpuQuantLayout } from './upload.js';

/** Workgroup sizes (powers of two ≤ 256: SwiftShader's cap). */
const WG_ROW = 64; // one workgroup per row / group
const WG_FLAT = 256; // elementwise

/** What the activation ops need of the backend. */
export interface ActivationOpsHost {
  readonly rec: StepRecorder;
  /** (4) f32 zeros for unused read bindings. */
  readonly dummy: GPUBuffer;
  pipe(spec: Omit<PipelineSpec, 'quant'> & { quant?: GpuQuantLayout }): CachedPipeline;
  /** The RoPE inverse-frequency table of a parameter set. */
  ropeTable(params: RopeParams): GPUBuffer;
  /** The step's multi-stream rope positions. */
  readonly ropePositions: RopePositions;
}

/** See the file header. */
export class ActivationOps {
  constructor(private readonly h: ActivationOpsHost) {}

  embed(out: Activation, table: Weight, n: number, tokens: GPUBuffer): void {
    const o = out as GpuActivation;
    const w = table as GpuWeight;
    const pipe = this.h.pipe({ kernel: 'embed', quant: w.layout, wgSize: WG_ROW });
    const groupsX = Math.ceil(w.rowLength / (4 * WG_ROW));
    for (const part of w.parts) {
      this.h.rec.dispatch(
        pipe,
        [null, part.buffer, tokens, o.buffer],
        (p) => p.u(w.rowLength).u(w.rowStride).u(part.rowStart).u(part.nRows).u(o.cols),
        [groupsX, n, 1],
      );
    }
  }

  rmsNorm(out: Activation, x: Activation, weight: Weight | null, eps: number, n: number, groupSize?: number): void {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    const g = groupSize ?? xa.cols;
    if (xa.cols % g !== 0 || o.cols !== xa.cols) {
      throw new LlmError(
        'invalid-request',
        `rmsNorm: ${xa.cols} columns are not whole groups of ${g} (or out has ${o.cols} columns)`,
      );
    }
    const inPlace = o.buffer === xa.buffer;
    const pipe = this.h.pipe({ kernel: 'rms_norm', entry: inPlace ? 'main_inplace' : 'main', wgSize: WG_ROW });
    const wb = weight ? ((weight as GpuWeight).vector ?? (weight as GpuWeight).parts[0]!.buffer) : this.h.dummy;
    this.h.rec.dispatch(
      pipe,
      [null, inPlace ? null : xa.buffer, o.buffer, wb],
      (p) =>
        p
          .u(xa.cols)
          .u(g)
          .f(eps)
          .u(weight ? 1 : 0),
      [xa.cols / g, n, 1],
    );
  }

  layerNorm(out: Activation, x: Activation, weight: Weight | null, bias: Weight | null, eps: number, n: number): void {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    if (o.cols !== xa.cols) throw new LlmError('invalid-request', `layerNorm: out has ${o.cols} columns, x ${xa.cols}`);
    const inPlace = o.buffer === xa.buffer;
    const pipe = this.h.pipe({ kernel: 'layer_norm', entry: inPlace ? 'main_inplace' : 'main', wgSize: WG_ROW });
    const vec = (w: Weight | null): Binding =>
      w ? ((w as GpuWeight).vector ?? (w as GpuWeight).parts[0]!.buffer) : this.h.dummy;
    this.h.rec.dispatch(
      pipe,
      [null, inPlace ? null : xa.buffer, o.buffer, vec(weight), vec(bias)],
      (p) =>
        p
          .u(xa.cols)
          .f(eps)
          .u(weight ? 1 : 0)
          .u(bias ? 1 : 0),
      [1, n, 1],
    );
  }

  gelu(x: Activation, n: number): void {
    const pipe = this.h.pipe({
      kernel: 'glu',
      entry: 'main_act',
      wgSize: WG_FLAT,
      constants: { IS_GELU: true },
      tag: 'gelu',
    });
    const count = n * x.cols;
    this.h.rec.dispatch(
      pipe,
      [null, null, null, (x as GpuActivation).buffer],
      (p) => p.u(count),
      grid(Math.ceil(count / WG_FLAT)),
    );
  }

  rope(st: KvStep, x: Activation, n: number, params: RopeParams): void {
    if (params.multi) return this.ropeMulti(st, x, n, params, params.multi);
    const xa = x as GpuActivation;
    const half = params.nRot / 2;
    const total = n * (xa.cols / params.headDim) * half;
    const y = ropeYarnUniforms(params);
    const table = this.h.ropeTable(params);
    const pipe = this.h.pipe({ kernel: 'rope', wgSize: WG_FLAT });
    this.h.rec.dispatch(
      pipe,
      [null, xa.buffer, table],
      (p) =>
        p
          .u(xa.cols)
          .u(params.headDim)
          .u(params.nRot)
          .u(st.startPos)
          .u(params.kind === 'neox' ? 1 : 0)
          .u(total)
          .f(params.freqScale)
          .f(y.extFactor)
          .f(y.mscale)
          .f(y.corrLo)
          .f(y.corrHi),
      grid(Math.ceil(total / WG_FLAT)),
    );
  }

  /** Multi-stream rope (rope_multi.wgsl): the step's explicit streams, or text rows at startPos + row. */
  private ropeMulti(st: KvStep, x: Activation, n: number, params: RopeParams, m: RopeSections): void {
    const xa = x as GpuActivation;
    const total = n * (xa.cols / params.headDim) * (params.nRot / 2);
    const y = ropeYarnUniforms(params);
    const pos = this.h.ropePositions;
    const pipe = this.h.pipe({ kernel: 'rope_multi', wgSize: WG_FLAT });
    const [t, h, w, e] = m.sections;
    this.h.rec.dispatch(
      pipe,
      [null, xa.buffer, this.h.ropeTable(params), pos.buffer(this.h.dummy)],
      (p) =>
        p
          .u(xa.cols)
          .u(params.headDim)
          .u(params.nRot)
          .u(st.startPos)
          .u(1)
          .u(total)
          .u(n)
          .u(pos.explicit ? 1 : 0)
          .u(t)
          .u(h)
          .u(w)
          .u(e)
          .u(m.interleaved ? 1 : 0)
          .f(params.freqScale)
          .f(y.extFactor)
          .f(y.mscale)
          .f(y.corrLo)
          .f(y.corrHi)
          .u(pos.offset),
      grid(Math.ceil(total / WG_FLAT)),
    );
  }

  glu(out: Activation, gate: Activation, up: Activation, n: number, act: GluActivation): void {
    const [o, g, u] = [out, gate, up].map((a) => (a as GpuActivation).buffer) as [GPUBuffer, GPUBuffer, GPUBuffer];
    if (o === g && o === u) throw new LlmError('invalid-request', 'glu: out, gate and up are the same buffer');
    const entry = o === g ? 'main_out_gate' : o === u ? 'main_out_up' : 'main';
    const pipe = this.h.pipe({
      kernel: 'glu',
      entry,
      wgSize: WG_FLAT,
      constants: { IS_GELU: act === 'gelu' },
      tag: act,
    });
    const count = n * out.cols;
    this.h.rec.dispatch(pipe, [null, g, u, o], (p) => p.u(count), grid(Math.ceil(count / WG_FLAT)));
  }

  add(out: Activation, a: Activation, b: Activation, n: number): void {
    const [o, ab, bb] = [out, a, b].map((x) => (x as GpuActivation).buffer) as [GPUBuffer, GPUBuffer, GPUBuffer];
    const count = n * out.cols;
    if (o === ab && o === bb) {
      this.scale(out, 2, n);
      return;
    }
    const entry = o === ab || o === bb ? 'main_out_a' : 'main';
    const other = o === ab ? bb : ab;
    const pipe = this.h.pipe({ kernel: 'add', entry, wgSize: WG_FLAT });
    this.h.rec.dispatch(
      pipe,
      entry === 'main' ? [null, ab, bb, o] : [null, null, other, o],
      (p) => p.u(count),
      grid(Math.ceil(count / WG_FLAT)),
    );
  }

  scale(x: Activation, s: number, n: number): void {
    this.unary(x, s, n, false);
  }

  softcap(x: Activation, cap: number, n: number): void {
    this.unary(x, cap, n, true);
  }

  clamp(x: Activation, lo: number, hi: number, n: number): void {
    this.unary(x, lo, n, false, hi);
  }

  copyRows(out: Activation, x: Activation, srcRow: number, n: number, dstRow = 0): void {
    const o = out as GpuActivation;
    const xa = x as GpuActivation;
    const count = n * xa.cols;
    const same = o.buffer === xa.buffer;
    if (same && srcRow === dstRow) return;
    if (o.cols !== xa.cols || (same && srcRow < dstRow + n && dstRow < srcRow + n)) {
      throw new LlmError(
        'invalid-request',
        `copyRows: out (${o.cols} cols) and x (${xa.cols} cols) must match and not overlap (srcRow ${srcRow}, dstRow ${dstRow}, n ${n})`,
      );
    }
    const pipe = this.h.pipe({ kernel: 'copy_rows', entry: same ? 'main_same' : 'main', wgSize: WG_FLAT });
    this.h.rec.dispatch(
      pipe,
      [null, same ? null : xa.buffer, o.buffer],
      (p) =>
        p
          .u(count)
          .u(srcRow * xa.cols)
          .u(dstRow * o.cols),
      grid(Math.ceil(count / WG_FLAT)),
    );
  }

  /** x = x · s, s · tanh(x / s) (softcap) or, with `hi`, min(max(x, s), hi) (clamp), in place. */
  private unary(x: Activation, s: number, n: number, isSoftcap: boolean, hi?: number): void {
    const count = n * x.cols;
    const isClamp = hi !== undefined;
    const pipe = this.h.pipe({
      kernel: 'scale',
      wgSize: WG_FLAT,
      constants: isClamp ? { IS_CLAMP: true } : { IS_SOFTCAP: isSoftcap },
      tag: isClamp ? 'clamp' : isSoftcap ? 'softcap' : undefined,
    });
    this.h.rec.dispatch(
      pipe,
      [null, (x as GpuActivation).buffer],
      (p) =>
        p
          .u(count)
          .f(s)
          .f(hi ?? 0),
      grid(Math.ceil(count / WG_FLAT)),
    );
  }
}
