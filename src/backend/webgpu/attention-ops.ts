/**
 * Attention over the KV cache: the per-query-head decode kernel with split-K, the tiled causal kernel (prefill,
 * and decode with grouped-query heads on GPUs), and the combine pass that merges split-K partial rows, whose
 * scratch buffer this class owns. Used by WebGpuOps through a narrow host interface.
 */

import { LlmError } from '../../errors.js';
import { alibiConstants } from '../alibi.js';
import type { AttentionParams, KvCacheSpec } from '../ops.js';
import {
  planPrefillAttention,
  PREFILL_ATTN_WG_SIZE,
  prefillAttentionGrid,
  prefillAttentionSplits,
} from './attention-prefill.js';
import type { GpuContext } from './device.js';
import type { GpuActivation, GpuWeight } from './gpu-resources.js';
import type { KvLayer, KvStep } from './kv-cache-ops.js';
import type { CachedPipeline, PipelineSpec } from './pipelines.js';
import type { ProfileCollector } from './profile.js';
import type { StepRecorder } from './step-recorder.js';

/** One workgroup per head (decode attention, combine). */
const WG_ROW = 64;
/** Positions per attention tile, and the most splits of a decode row. */
const ATTN_MIN_SPLIT = 64;
const ATTN_MAX_SPLITS = 32;

/** What attention needs of the backend. */
export interface AttentionHost {
  readonly ctx: GpuContext;
  readonly device: GPUDevice;
  readonly rec: StepRecorder;
  pipe(spec: Omit<PipelineSpec, 'quant'>): CachedPipeline;
  buffer(label: string, size: number, extraUsage: number): GPUBuffer;
  /** Destroys a buffer once the work recorded so far is submitted. */
  release(b: GPUBuffer): void;
  /** The running profile's collector, or null when none runs. */
  profiler(): ProfileCollector | null;
}

/** See the file header. */
export class AttentionOps {
  private partial: GPUBuffer | null = null; // (rows, nHeads, splits, headDim + 2) f32
  private partialFloats = 0;

  constructor(private readonly h: AttentionHost) {}

  /** out = attention(q, K, V of `l`) for the step's n tokens at st.startPos … (spec: the cache `l` belongs to). */
  attention(
    st: KvStep,
    spec: KvCacheSpec,
    l: KvLayer,
    o: GpuActivation,
    qa: GpuActivation,
    n: number,
    params: AttentionParams,
  ): void {
    const ctx = this.h.ctx;
    const { nHeads, nKvHeads, headDim } = params;
    if (headDim > 8 * WG_ROW || nHeads % nKvHeads !== 0 || o.buffer === qa.buffer) {
      throw new LlmError(
        'invalid-request',
        `attention: unsupported geometry (headDim ${headDim} ≤ ${8 * WG_ROW}, nHeads ${nHeads} a multiple of nKvHeads ${nKvHeads}, out distinct from q)`,
      );
    }
    // Sink logits (gpt-oss) enter in the combine pass, which then always runs: the kernels write partial rows.
    const sinks = params.sinks ? (params.sinks as GpuWeight).vector : null;
    const kvCols = nKvHeads * headDim;
    const kvLen = st.startPos + n;
    const kvEnd = params.causal === false ? kvLen : 0; // non-causal: every row sees the whole sequence
    const symmetric = kvEnd > 0 && params.symmetricWindow === true && params.slidingWindow > 0; // ± window/2 of each row
    const alibi = params.alibiMaxBias ? alibiConstants(nHeads, params.alibiMaxBias) : null; // jina-bert-v2
    const rowFloats = nHeads * (headDim + 2);
    const needFloats = Math.max(qa.maxRows, ATTN_MAX_SPLITS) * rowFloats;
    if (this.partialFloats < needFloats) {
      if (this.partial) this.h.release(this.partial);
      this.partial = this.h.buffer('attention-partial', needFloats * 4, 0);
      this.partialFloats = needFloats;
    }
    const maxSplits = Math.max(1, Math.min(Math.floor(this.partialFloats / (n * rowFloats)), ATTN_MAX_SPLITS));
    // Prefill (n ≥ 2): the tiled causal kernel, K/V tiles shared by a workgroup's tokens and GQA heads; split-K on
    // GPUs when it alone would leave the device idle (a few tokens after a long prefix).
    const group = nHeads / nKvHeads;
    // Decode on GPUs with grouped-query attention takes it too: one workgroup per KV head (× splits) reads each K/V
    // byte once for all the query heads of its group, instead of once per query head.
    const isTiled = n >= 2 || (!ctx.isSoftware && group >= 2);
    const tiles = isTiled
      ? planPrefillAttention(headDim, n * group, ctx.isF16 ? 2 : 4, this.h.device.limits.maxComputeWorkgroupStorageSize)
      : null;
    if (tiles) {
      const groups = prefillAttentionGrid(tiles, n, nHeads, nKvHeads);
      const splits = ctx.isSoftware ? 1 : prefillAttentionSplits(groups[0] * groups[1], kvLen, tiles.keys, maxSplits);
      const pipe = this.h.pipe({
        kernel: 'attention_prefill',
        wgSize: PREFILL_ATTN_WG_SIZE,
        constants: { HD: tiles.headDim, ROWS: tiles.rows, KEYS: tiles.keys },
        tag: `hd${tiles.headDim}.r${tiles.rows}.k${tiles.keys}`,
      });
      this.h.rec.dispatch(
        pipe,
        [null, qa.buffer, l.k, l.v, o.buffer, this.partial],
        (p) =>
          p
            .u(n)
            .u(group)
            .u(qa.cols)
            .u(kvCols)
            .u(st.slot * spec.contextLength * kvCols)
            .u(st.startPos)
            .u(params.slidingWindow)
            .f(params.scale)
            .f(params.softcap)
            .u(splits)
            .u(Math.ceil(kvLen / splits))
            .u(splits === 1 && !sinks ? 1 : 0)
            .u(kvEnd)
            .u(symmetric ? 1 : 0)
            .f(alibi?.m0 ?? 0)
            .f(alibi?.m1 ?? 0)
            .u(alibi?.nLog2 ?? 0),
        [groups[0], groups[1], splits],
      );
      const prof = this.h.profiler();
      if (prof) {
        const kvRow = headDim * (ctx.isF16 ? 2 : 4) * 2; // K and V of one position of one KV head
        let read = 0;
        for (let t = 0; t < groups[0]; t++)
          read +=
            (st.startPos + Math.floor((Math.min((t + 1) * tiles.rows, n * group) - 1) / group) + 1) * kvRow * nKvHeads;
        prof.attention(kvLen * kvRow * nKvHeads, read);
      }
      this.combine(o, nHeads, headDim, splits, n, sinks);
      return;
    }
    if (alibi && kvLen > 1) {
      // The per-row kernel has no ALiBi bias (only the tiled one does); one key alone has a zero bias.
      throw new LlmError('unsupported-arch', 'attention: ALiBi needs the tiled kernel');
    }
    if (symmetric && kvLen > 1) {
      // The per-row kernel has no symmetric window (only the tiled one does); one key alone needs none.
      throw new LlmError('unsupported-arch', 'attention: a symmetric sliding window needs the tiled kernel');
    }
    const nSplits = Math.max(1, Math.min(Math.ceil(kvLen / ATTN_MIN_SPLIT), maxSplits));
    const splitLen = Math.ceil(kvLen / nSplits);
    const attn = this.h.pipe({ kernel: 'attention', wgSize: WG_ROW });
    this.h.rec.dispatch(
      attn,
      [null, qa.buffer, l.k, l.v, o.buffer, this.partial],
      (p) =>
        p
          .u(nHeads)
          .u(nKvHeads)
          .u(headDim)
          .u(qa.cols)
          .u(kvCols)
          .u(st.slot * spec.contextLength * kvCols)
          .u(st.startPos)
          .u(params.slidingWindow)
          .u(nSplits)
          .u(splitLen)
          .u(nSplits === 1 && !sinks ? 1 : 0)
          .f(params.scale)
          .f(params.softcap)
          .u(kvEnd),
      [nSplits, nHeads, n],
    );
    const prof = this.h.profiler();
    if (prof) {
      const kvRow = headDim * (ctx.isF16 ? 2 : 4) * 2;
      let read = 0;
      for (let i = 0; i < n; i++) read += (st.startPos + i + 1) * kvRow * nHeads; // every query head reads its KV head
      prof.attention(kvLen * kvRow * nKvHeads, read);
    }
    this.combine(o, nHeads, headDim, nSplits, n, sinks);
  }

  /** Merges the split-K partial rows of attention into `o`, adding the sinks (nothing to do for one split without). */
  private combine(
    o: GpuActivation,
    nHeads: number,
    headDim: number,
    nSplits: number,
    n: number,
    sinks: GPUBuffer | null,
  ): void {
    if (nSplits === 1 && !sinks) return;
    const combine = this.h.pipe({ kernel: 'attention_combine', wgSize: WG_ROW });
    this.h.rec.dispatch(
      combine,
      [null, this.partial, o.buffer, sinks ?? this.partial],
      (p) =>
        p
          .u(nHeads)
          .u(headDim)
          .u(nSplits)
          .u(o.cols)
          .u(sinks ? 1 : 0),
      [nHeads, n, 1],
    );
  }
}
