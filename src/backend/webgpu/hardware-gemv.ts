/**
 * The hardware kernel set's decode GEMV (gemv_sg with subgroups, gemv without) and the weight groups it reads:
 * RMSNorm, bias, residual accumulate and gate·up·GLU folded into the matvec, Q|K|V recorded as one dispatch, and
 * Q|K|V / gate|up uploaded into one buffer each (aligned ranges, so every other kernel still binds a member alone).
 * Used by WebGpuOps through a narrow host interface.
 */

import { BufferUsage } from './gpu-flags.js';
import type { FusedNorm, GluActivation, Weight } from '../ops.js';
import type { GpuContext } from './device.js';
import { GEMV_SG_ROWS, GEMV_SG_WG, gemvSgWorkgroupSize, writeGemvSgParams } from './gemv-sg-params.js';
import { gemvSgInt8, gemvSgQuant, gemvSgRowsPerSubgroup } from './gemv-sg-quant.js';
import { GEMV_WG, gemvShape } from './gemv-shape.js';
import type { GpuActivation, GpuWeight, GpuWeightGroup } from './gpu-resources.js';
import type { CachedPipeline, PipelineSpec } from './pipelines.js';
import { grid, type StepRecorder } from './step-recorder.js';
import { type GpuQuantLayout, scaleBytes } from './upload.js';
import { groupOffsets, type WeightGroupKind, type WeightGroupSlot } from './weight-groups.js';

const SG_WG = GEMV_SG_WG;
const SG_ROWS = GEMV_SG_ROWS;

/** A Q|K|V group being recorded: q, then k, then v arrive as three matmulFused calls and go out as one dispatch. */
interface PendingQkv {
  group: GpuWeightGroup;
  x: GpuActivation;
  norm: FusedNorm | null;
  readonly outs: GpuActivation[];
  readonly biases: (GpuWeight | null)[];
}

/** What the hardware GEMV needs of the backend. */
export interface HardwareGemvHost {
  readonly ctx: GpuContext;
  readonly device: GPUDevice;
  readonly rec: StepRecorder;
  readonly maxWeightBinding: number;
  /** (4) f32 zeros for unused read bindings, and two distinct buffers for unused read-write ones. */
  readonly dummy: GPUBuffer;
  readonly dummyRw: readonly [GPUBuffer, GPUBuffer];
  pipe(spec: Omit<PipelineSpec, 'quant'> & { quant?: GpuQuantLayout }): CachedPipeline;
  buffer(label: string, size: number, extraUsage: number): GPUBuffer;
  /** The f32 buffer of a 1-D weight. */
  vec(w: Weight): GPUBuffer;
  profileMatmul(
    kernel: string,
    ws: readonly GpuWeight[],
    nRows: number,
    n: number,
    groups: readonly number[],
    wgSize: number,
    reads: number,
  ): void;
}

/** See the file header. */
export class HardwareGemv {
  private readonly pendingGroups = new Map<
    string,
    { slot: WeightGroupSlot; members: (GpuWeight | undefined)[]; bytes: (Uint8Array | undefined)[] }
  >();
  private pendingQkv: PendingQkv | null = null;
  private qkvRecord: PendingQkv | null = null;
  // per quant layout and row length (gemv_sg's K override), by fusion flags; reused for every layer and token
  private readonly sgPipes = new Map<GpuQuantLayout, Map<number, CachedPipeline[]>>();
  private readonly qkvBiases = new WeakMap<GpuWeightGroup, GPUBuffer>(); // concatenated bq|bk|bv

  constructor(private readonly h: HardwareGemvHost) {}

  /** True while grouped weights wait for the rest of their group. */
  get hasPendingGroups(): boolean {
    return this.pendingGroups.size > 0;
  }

  /**
   * out (+)= norm(x)·Wᵀ (+ bias) for one token, or false where the hardware GEMV does not take it. Q, K and V of one
   * group are held back and recorded as one dispatch when the third arrives (`settle` records what is held).
   */
  fused(
    o: GpuActivation,
    xa: GpuActivation,
    wt: GpuWeight,
    n: number,
    bias: GpuWeight | null,
    norm: FusedNorm | null,
    accumulate: boolean,
  ): boolean {
    if (!this.applies(xa, wt, n, norm)) return false;
    const g = wt.group;
    if (g?.kind !== 'qkv' || accumulate) {
      this.gemv(o, xa, wt, n, bias, norm, accumulate);
      return true;
    }
    // Q, K, V arrive one call each: collect them and record one dispatch for the three (or each alone if the
    // sequence breaks: another op, another x or norm).
    const i = g.members.indexOf(wt);
    const pend = this.pendingQkv;
    if (
      pend &&
      pend.group === g &&
      pend.outs.length === i &&
      pend.x === xa &&
      pend.norm?.weight === norm?.weight &&
      pend.norm?.eps === norm?.eps
    ) {
      pend.outs.push(o);
      pend.biases.push(bias);
    } else {
      this.settle();
      if (i !== 0) {
        this.gemv(o, xa, wt, n, bias, norm, false);
        return true;
      }
      const r = (this.qkvRecord ??= { group: g, x: xa, norm, outs: [], biases: [] });
      r.group = g;
      r.x = xa;
      r.norm = norm;
      r.outs.length = 0;
      r.biases.length = 0;
      r.outs.push(o);
      r.biases.push(bias);
      this.pendingQkv = r;
    }
    if (this.pendingQkv?.outs.length === 3) this.emitQkv();
    return true;
  }

  /** out = act(norm(x)·gateᵀ)·(norm(x)·upᵀ) in one dispatch when gate and up were uploaded as one group; else false. */
  glu(
    o: GpuActivation,
    xa: GpuActivation,
    g: GpuWeight,
    u: GpuWeight,
    n: number,
    act: GluActivation,
    norm: FusedNorm | null,
  ): boolean {
    const grp = g.group;
    if (grp?.kind !== 'gate_up' || u.group !== grp || grp.members[0] !== g || !this.applies(xa, g, n, norm))
      return false;
    const { wg, rows } = this.shape(g.nRows, g.rowLength, g.layout);
    const pipe = this.sgPipe(g.layout, g.rowLength, wg, rows, norm !== null, false, act);
    const groups = grid(Math.ceil(g.nRows / rows), 1);
    this.h.rec.dispatch(
      pipe,
      [
        null,
        grp.buffer,
        xa.buffer,
        o.buffer,
        this.h.dummy,
        norm ? this.h.vec(norm.weight) : this.h.dummy,
        this.h.dummyRw[0],
        this.h.dummyRw[1],
      ],
      (p) =>
        writeGemvSgParams(p, {
          k: g.rowLength,
          n_rows: g.nRows,
          row_stride: g.rowStride,
          x_stride: xa.cols,
          out_stride: o.cols,
          out_offset: 0,
          has_bias: 0,
          x_offset: 0,
          eps: norm?.eps ?? 0,
          split1: g.nRows,
          split2: g.nRows,
          out1_stride: 0,
          out2_stride: 0,
          w_base1: grp.wordBase[1]!,
          w_base2: 0,
        }),
      groups,
    );
    this.h.profileMatmul(pipe.label, [g, u], g.nRows, 1, groups, wg, 1);
    return true;
  }

  /** Records the held Q, K, V products one dispatch each (their biases do not all match, or the group broke). */
  private emitEach(pend: PendingQkv): void {
    for (let i = 0; i < pend.outs.length; i++) {
      this.gemv(pend.outs[i]!, pend.x, pend.group.members[i]!, 1, pend.biases[i]!, pend.norm, false);
    }
  }

  /** True when the hardware GEMV takes a fused decode product of `w` (one token, norm over all of x). */
  private applies(xa: GpuActivation, w: GpuWeight, n: number, norm: FusedNorm | null): boolean {
    if (this.h.ctx.isSoftware || n !== 1 || w.vector || w.parts.length === 0) return false;
    return !norm || ((norm.weight as GpuWeight).rowLength === w.rowLength && xa.cols === w.rowLength);
  }

  /** Records the collected Q|K|V products (see matmulFused) as one gemv_sg dispatch. */
  private emitQkv(): void {
    const pend = this.pendingQkv!;
    this.pendingQkv = null;
    const g = pend.group;
    const [q, k, v] = g.members as [GpuWeight, GpuWeight, GpuWeight];
    let withBias = 0;
    for (const b of pend.biases) if (b) withBias++;
    if (withBias !== 0 && withBias !== 3) {
      this.emitEach(pend);
      return;
    }
    let bias = this.h.dummy;
    if (withBias === 3) {
      let b = this.qkvBiases.get(g);
      if (!b) {
        const hosts = pend.biases.map((x) => x!.host!);
        const all = new Float32Array(hosts.reduce((a, h) => a + h.length, 0)); // (nq + nk + nv) f32
        let at = 0;
        for (const h of hosts) {
          all.set(h, at);
          at += h.length;
        }
        b = this.h.buffer(`${q.name}.bias-qkv`, all.byteLength, BufferUsage.COPY_DST);
        this.h.device.queue.writeBuffer(b, 0, all);
        this.qkvBiases.set(g, b);
      }
      bias = b;
    }
    const [o0, o1, o2] = pend.outs as [GpuActivation, GpuActivation, GpuActivation];
    const total = q.nRows + k.nRows + v.nRows;
    const { wg, rows } = this.shape(total, q.rowLength, q.layout);
    const pipe = this.sgPipe(q.layout, q.rowLength, wg, rows, pend.norm !== null, false, null);
    const groups = grid(Math.ceil(total / rows), 1);
    const nw = pend.norm ? this.h.vec(pend.norm.weight) : this.h.dummy;
    this.h.rec.dispatch(
      pipe,
      [null, g.buffer, pend.x.buffer, o0.buffer, bias, nw, o1.buffer, o2.buffer],
      (p) =>
        writeGemvSgParams(p, {
          k: q.rowLength,
          n_rows: total,
          row_stride: q.rowStride,
          x_stride: pend.x.cols,
          out_stride: o0.cols,
          out_offset: 0,
          has_bias: withBias ? 1 : 0,
          x_offset: 0,
          eps: pend.norm?.eps ?? 0,
          split1: q.nRows,
          split2: q.nRows + k.nRows,
          out1_stride: o1.cols,
          out2_stride: o2.cols,
          w_base1: g.wordBase[1]!,
          w_base2: g.wordBase[2]!,
        }),
      groups,
    );
    this.h.profileMatmul(pipe.label, [q, k, v], total, 1, groups, wg, 1);
  }

  /** The hardware GEMV (gemv_sg) of one weight, part by part, with the fusions asked for. */
  gemv(
    o: GpuActivation,
    xa: GpuActivation,
    wt: GpuWeight,
    n: number,
    bias: GpuWeight | null,
    norm: FusedNorm | null,
    accumulate: boolean,
  ): void {
    const { wg, rows } = this.shape(wt.nRows, wt.rowLength, wt.layout);
    const pipe = this.sgPipe(wt.layout, wt.rowLength, wg, rows, norm !== null, accumulate, null);
    const b = bias ? this.h.vec(bias) : this.h.dummy;
    const nw = norm ? this.h.vec(norm.weight) : this.h.dummy;
    for (const part of wt.parts) {
      const groups = grid(Math.ceil(part.nRows / rows), n);
      this.h.rec.dispatch(
        pipe,
        [null, part.buffer, xa.buffer, o.buffer, b, nw, this.h.dummyRw[0], this.h.dummyRw[1]],
        (p) =>
          writeGemvSgParams(p, {
            k: wt.rowLength,
            n_rows: part.nRows,
            row_stride: wt.rowStride,
            x_stride: xa.cols,
            out_stride: o.cols,
            out_offset: part.rowStart,
            has_bias: bias ? 1 : 0,
            x_offset: 0,
            eps: norm?.eps ?? 0,
            split1: part.nRows,
            split2: part.nRows,
            out1_stride: 0,
            out2_stride: 0,
            w_base1: 0,
            w_base2: 0,
          }),
        groups,
      );
      this.h.profileMatmul(pipe.label, [wt], part.nRows, n, groups, wg, n);
    }
  }

  /**
   * Workgroup size and rows per workgroup of the hardware GEMV for `nRows` rows of length `k`: gemv_sg's (wider
   * workgroups for few long rows, ROWS rows) with subgroups, gemv's split (gemv-shape.ts) without.
   */
  private shape(nRows: number, k: number, quant: GpuQuantLayout): { wg: number; rows: number } {
    if (this.h.ctx.isSubgroups) return { wg: gemvSgWorkgroupSize(nRows, k), rows: SG_ROWS };
    return { wg: GEMV_WG, rows: gemvShape(nRows, k, gemvSgRowsPerSubgroup(quant)).rows };
  }

  /** The hardware GEMV variant with these fusions: gemv_sg with subgroups, else gemv (same Params and bindings). */
  private sgPipe(
    quant: GpuQuantLayout,
    k: number,
    wg: number,
    rows: number,
    hasNorm: boolean,
    accumulate: boolean,
    glu: GluActivation | null,
  ): CachedPipeline {
    this.settle(); // a held Q|K|V group is recorded before anything after it (as the backend's pipe() does)
    // Looked up per dispatch: a small array per quant layout indexed by the fusion flags, so no key string is built.
    const index =
      (hasNorm ? 1 : 0) |
      (accumulate ? 2 : 0) |
      (glu === 'silu' ? 4 : glu === 'gelu' ? 8 : 0) |
      ((this.h.ctx.isSubgroups ? (wg !== SG_WG ? 1 : 0) : rows) << 4); // gemv: one variant per rows per workgroup
    let byK = this.sgPipes.get(quant);
    if (!byK) this.sgPipes.set(quant, (byK = new Map()));
    let byFlags = byK.get(k);
    if (!byFlags) byK.set(k, (byFlags = []));
    return (byFlags[index] ??= this.createSgPipe(quant, k, wg, rows, hasNorm, accumulate, glu));
  }

  private createSgPipe(
    quant: GpuQuantLayout,
    k: number,
    wg: number,
    rows: number,
    hasNorm: boolean,
    accumulate: boolean,
    glu: GluActivation | null,
  ): CachedPipeline {
    const sg = this.h.ctx.isSubgroups;
    const tag =
      [hasNorm ? 'norm' : '', accumulate ? 'acc' : '', glu ? `glu_${glu}` : '', `k${k}`, sg ? '' : `rows${rows}`]
        .filter((t) => t)
        .join('_') || undefined;
    const fusions = { HAS_NORM: hasNorm, ACCUMULATE: accumulate, IS_GLU: glu !== null, IS_GELU: glu === 'gelu' };
    return this.h.pipe({
      kernel: sg ? 'gemv_sg' : 'gemv',
      quant: gemvSgQuant(quant, sg && this.h.ctx.isInt8Dot),
      wgSize: wg,
      constants: {
        ROWS: rows,
        R: gemvSgRowsPerSubgroup(quant),
        K: k,
        ...(sg ? { Q8_X: gemvSgInt8(quant, this.h.ctx.isInt8Dot) } : {}),
        ...fusions,
      },
      ...(tag ? { tag } : {}),
    });
  }

  /** Records what is held back (a Q|K|V group still incomplete) before anything else is recorded or submitted. */
  settle(): void {
    const pend = this.pendingQkv;
    if (!pend) return;
    this.pendingQkv = null;
    this.emitEach(pend);
  }

  /** Adds a member to its pending group; uploads the group once complete. */
  stash(slot: WeightGroupSlot, w: GpuWeight, bytes: Uint8Array): void {
    let g = this.pendingGroups.get(slot.key);
    if (!g) {
      g = { slot, members: [], bytes: [] };
      this.pendingGroups.set(slot.key, g);
    }
    g.members[slot.index] = w;
    g.bytes[slot.index] = bytes;
    if (g.members.filter((m) => m).length === slot.size) {
      this.pendingGroups.delete(slot.key);
      this.commitGroup(slot.kind, g.members as GpuWeight[], g.bytes as Uint8Array[]);
    }
  }

  /** Uploads complete group members into one buffer (or each alone when they differ in type or row length). */
  private commitGroup(kind: WeightGroupKind | null, members: readonly GpuWeight[], bytes: readonly Uint8Array[]): void {
    const first = members[0]!;
    const align = this.h.device.limits.minStorageBufferOffsetAlignment;
    const { offsets, total } = groupOffsets(
      bytes.map((b) => b.byteLength),
      align,
    );
    const alike = members.every(
      (m) => m.type === first.type && m.rowLength === first.rowLength && m.rowStride === first.rowStride,
    );
    if (kind === null || !alike || total > this.h.maxWeightBinding) {
      members.forEach((m, i) => {
        const buffer = this.h.buffer(m.name, bytes[i]!.byteLength, BufferUsage.COPY_DST);
        this.h.device.queue.writeBuffer(
          buffer,
          0,
          bytes[i]!.buffer as ArrayBuffer,
          bytes[i]!.byteOffset,
          bytes[i]!.byteLength,
        );
        m.parts = [{ buffer, rowStart: 0, nRows: m.nRows }];
      });
      return;
    }
    const buffer = this.h.buffer(members.map((m) => m.name).join('+'), total, BufferUsage.COPY_DST);
    const group: GpuWeightGroup = { kind, buffer, members, wordBase: offsets.map((o) => o / 4) };
    members.forEach((m, i) => {
      // A member's range runs to the next member (or the buffer's end): a row-split member's scale region is
      // right-justified there, so its binding alone and gemv_io's segments of the whole buffer both end at it.
      const end = offsets[i + 1] ?? total;
      const b = bytes[i]!;
      const tail = scaleBytes(m.layout, m.rowLength, m.nRows);
      const q = this.h.device.queue;
      q.writeBuffer(buffer, offsets[i]!, b.buffer as ArrayBuffer, b.byteOffset, b.byteLength - tail);
      if (tail > 0)
        q.writeBuffer(buffer, end - tail, b.buffer as ArrayBuffer, b.byteOffset + b.byteLength - tail, tail);
      m.parts = [{ buffer: { buffer, offset: offsets[i]!, size: end - offsets[i]! }, rowStart: 0, nRows: m.nRows }];
      m.group = group;
    });
  }

  /** Uploads the members of groups that never completed, each alone. */
  commitPending(): void {
    for (const g of this.pendingGroups.values()) {
      const present = g.members.map((m, i) => [m, g.bytes[i]] as const).filter(([m]) => m);
      this.commitGroup(
        null,
        present.map(([m]) => m!),
        present.map(([, b]) => b!),
      );
    }
    this.pendingGroups.clear();
  }
}
