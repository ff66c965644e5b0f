/**
 * Weight upload to the GPU: 1-D weights as f32 vectors, matrices repacked into word-aligned rows (see upload.ts)
 * and split into parts that each fit one storage binding; on the hardware kernel set Q|K|V and gate|up members are
 * handed to the hardware GEMV, which uploads each group into one buffer once it is complete.
 */

import { BufferUsage } from './gpu-flags.js';
import { LlmError, throwIfAborted } from '../../errors.js';
import { GgmlType } from '../../gguf/types.js';
import { GGML_TYPES } from '../../gguf/types.js';
import type { Weight, WeightInfo, WeightStream } from '../ops.js';
import type { GpuContext } from './device.js';
import type { GpuWeight } from './gpu-resources.js';
import type { StepRecorder } from './step-recorder.js';
import {
  getGpuQuantLayout,
  partBytes,
  repackRows,
  rowBytes,
  rowWords,
  scaleBytes,
  splitRows,
  vectorToF32,
  writeScales,
} from './upload.js';
import { weightGroupOf, type WeightGroupSlot } from './weight-groups.js';
import { expertParts } from './moe-ops.js';

/** What the weight upload needs of the backend. */
export interface WeightUploadHost {
  readonly ctx: GpuContext;
  readonly device: GPUDevice;
  readonly rec: StepRecorder;
  /** Largest weight binding (bytes): bigger matrices are split into parts of whole rows. */
  readonly maxWeightBinding: number;
  buffer(label: string, size: number, extraUsage: number): GPUBuffer;
  /** Holds a grouped weight's repacked rows until its whole group has arrived (HardwareGemv.stash). */
  stash(slot: WeightGroupSlot, w: GpuWeight, bytes: Uint8Array): void;
}

/**
 * Rows shorter than this are no matmul's (every quant block holds ≥ 32 values): such tensors (lfm2's depthwise conv
 * kernel, [taps, channels]) are read elementwise, so they are uploaded as f32 like 1-D tensors.
 */
const MIN_MATRIX_ROW = 32;

/** Uploads one tensor (`Ops.uploadWeight`). */
export async function uploadGpuWeight(
  h: WeightUploadHost,
  info: WeightInfo,
  data: Uint8Array,
  signal?: AbortSignal,
): Promise<Weight> {
  throwIfAborted(signal, `uploading ${info.name}`);
  h.rec.checkAlive();
  const rowLength = info.shape[0] ?? 1;
  const nRows = info.shape.slice(1).reduce((a, b) => a * b, 1);
  if (info.shape.length === 1 || rowLength < MIN_MATRIX_ROW) {
    const values = vectorToF32(info.name, info.type, data, rowLength * nRows);
    const buffer = h.buffer(info.name, values.byteLength, BufferUsage.COPY_DST);
    h.device.queue.writeBuffer(buffer, 0, values.buffer as ArrayBuffer, values.byteOffset, values.byteLength);
    const layout = getGpuQuantLayout(GgmlType.F32);
    const w: GpuWeight = {
      name: info.name,
      type: info.type,
      rowLength,
      nRows,
      layout,
      rowStride: rowLength,
      parts: [{ buffer, rowStart: 0, nRows }],
      vector: buffer,
      host: values,
      group: null,
    };
    return w;
  }
  const layout = getGpuQuantLayout(info.type, info.name, h.ctx.isSoftware ? 'software' : 'hardware');
  if (rowLength % layout.blockElements !== 0) {
    throw new LlmError(
      'gguf-invalid',
      `uploading ${info.name}: row length ${rowLength} is not a multiple of the ${layout.name} block size ${layout.blockElements}`,
      {
        details: { tensor: info.name, rowLength, blockElements: layout.blockElements },
      },
    );
  }
  const needBytes = (rowLength / layout.blockElements) * layout.blockBytes * nRows;
  if (data.byteLength < needBytes) {
    throw new LlmError(
      'gguf-invalid',
      `uploading ${info.name}: ${data.byteLength} bytes given, ${needBytes} needed for shape [${info.shape.join(', ')}] of ${layout.name}`,
      {
        details: { tensor: info.name, byteLength: data.byteLength, needBytes },
      },
    );
  }
  const rowStride = rowWords(layout, rowLength);
  const slot = h.ctx.isSoftware ? null : weightGroupOf(info.name);
  if (slot && partBytes(layout, rowLength, nRows) <= h.maxWeightBinding) {
    // Grouped (Q|K|V, gate|up): held until the whole group is here, then uploaded into one buffer.
    const w = matrixWeight(info, layout, rowLength, nRows, rowStride, []);
    h.stash(slot, w, repackRows(layout, data, rowLength, { rowStart: 0, nRows }).slice());
    return w;
  }
  const parts = [];
  // A 3-D expert stack [k, rows, nExperts] splits at expert boundaries (gemv_id addresses experts within a part).
  for (const part of weightParts(h, info, nRows, rowBytes(layout, rowLength))) {
    throwIfAborted(signal, `uploading ${info.name}`);
    const bytes = repackRows(layout, data, rowLength, part);
    const buffer = h.buffer(info.name, bytes.byteLength, BufferUsage.COPY_DST);
    h.device.queue.writeBuffer(buffer, 0, bytes.buffer, bytes.byteOffset, bytes.byteLength);
    parts.push({ buffer, rowStart: part.rowStart, nRows: part.nRows });
    if (parts.length > 1) await Promise.resolve(); // let an abort land between big parts
  }
  return matrixWeight(info, layout, rowLength, nRows, rowStride, parts);
}

/**
 * Streams one tensor in (`Ops.beginWeight`): a matrix's GPU buffers are created first, each committed piece (whole
 * rows, read into one of two reused staging arrays) is repacked and written with `writeBuffer` at its rows' place,
 * so reading the file and uploading overlap and no copy of the whole tensor is made. Vectors and grouped members
 * (held until their group is complete anyway) are gathered whole and go through `uploadGpuWeight`.
 */
export function beginGpuWeight(h: WeightUploadHost, info: WeightInfo): WeightStream {
  h.rec.checkAlive();
  const rowLength = info.shape[0] ?? 1;
  const nRows = info.shape.slice(1).reduce((a, b) => a * b, 1);
  const geometry = GGML_TYPES.get(info.type);
  if (!geometry) {
    throw new LlmError('unsupported-type', `uploading ${info.name}: unknown ggml type id ${info.type}`, {
      details: { tensor: info.name, type: info.type },
    });
  }
  const srcRowBytes = (rowLength / geometry.blockElements) * geometry.blockBytes;
  const byteLength = srcRowBytes * nRows;
  const layout =
    info.shape.length === 1
      ? null
      : getGpuQuantLayout(info.type, info.name, h.ctx.isSoftware ? 'software' : 'hardware');
  const rowStride = layout ? rowWords(layout, rowLength) : 0;
  const isGrouped =
    !h.ctx.isSoftware &&
    weightGroupOf(info.name) !== null &&
    layout !== null &&
    partBytes(layout, rowLength, nRows) <= h.maxWeightBinding;
  if (layout === null || isGrouped || rowLength % layout.blockElements !== 0) {
    const whole = new Uint8Array(byteLength); // (byteLength) bytes of GGUF rows
    return {
      target: (offset, length) => whole.subarray(offset, offset + length),
      commit: () => undefined,
      finish: () => uploadGpuWeight(h, info, whole),
      cancel: () => undefined,
    };
  }
  const parts = weightParts(h, info, nRows, rowBytes(layout, rowLength)).map((p) => ({
    buffer: h.buffer(info.name, partBytes(layout, rowLength, p.nRows), BufferUsage.COPY_DST),
    rowStart: p.rowStart,
    nRows: p.nRows,
    // row-split: the part's scale region, filled piece by piece and written at finish (its pieces need not be words)
    scales: new Uint8Array(scaleBytes(layout, rowLength, p.nRows)),
  }));
  const staging = [new Uint8Array(0), new Uint8Array(0)]; // pieces alternate: two may be outstanding
  let targeted = 0;
  let committedPieces = 0;
  let committed = 0;
  return {
    target: (_offset, length) => {
      const i = targeted++ & 1;
      if (staging[i].byteLength < length) staging[i] = new Uint8Array(length);
      return staging[i].subarray(0, length); // (length) bytes of GGUF rows at `offset`
    },
    commit: (offset, length) => {
      if (offset !== committed || offset % srcRowBytes !== 0 || length % srcRowBytes !== 0) {
        throw new LlmError(
          'invalid-request',
          `uploading ${info.name}: piece [${offset}, ${offset + length}) out of order or not whole rows`,
          {
            details: { tensor: info.name, offset, length },
          },
        );
      }
      h.rec.checkAlive();
      const r0 = offset / srcRowBytes;
      const n = length / srcRowBytes;
      const src = staging[committedPieces++ & 1].subarray(0, length);
      const bytes = repackRows(layout, src, rowLength, { rowStart: 0, nRows: n }); // [n, rowStride] words (+ scales)
      for (const p of parts) {
        const lo = Math.max(r0, p.rowStart);
        const hi = Math.min(r0 + n, p.rowStart + p.nRows);
        if (lo >= hi) continue;
        if (layout.rowSplit) {
          const rows = src.subarray((lo - r0) * srcRowBytes, (hi - r0) * srcRowBytes);
          writeScales(layout, rows, rowLength, hi - lo, lo - p.rowStart, p.scales);
        }
        h.device.queue.writeBuffer(
          p.buffer,
          (lo - p.rowStart) * rowStride * 4,
          bytes.buffer,
          bytes.byteOffset + (lo - r0) * rowStride * 4,
          (hi - lo) * rowStride * 4,
        );
      }
      committed += length;
    },
    finish: async () => {
      if (committed !== byteLength) {
        throw new LlmError('invalid-request', `uploading ${info.name}: ${committed} of its ${byteLength} bytes given`, {
          details: { tensor: info.name, committed, byteLength },
        });
      }
      for (const p of parts) {
        if (p.scales.byteLength === 0) continue;
        const at = partBytes(layout, rowLength, p.nRows) - p.scales.byteLength;
        h.device.queue.writeBuffer(p.buffer, at, p.scales.buffer, 0, p.scales.byteLength);
      }
      return matrixWeight(
        info,
        layout,
        rowLength,
        nRows,
        rowStride,
        parts.map(({ buffer, rowStart, nRows }) => ({ buffer, rowStart, nRows })),
      );
    },
    cancel: () => undefined, // the part buffers are the backend's: destroy() releases them
  };
}

/**
 * The binding-sized parts of a matrix: row ranges, or for a 3-D expert stack [k, rows, nExperts] whole experts
 * (gemv_id addresses experts within a part). The whole-tensor and the streamed upload split alike.
 */
function weightParts(
  h: WeightUploadHost,
  info: WeightInfo,
  nRows: number,
  rowBytes: number,
): { readonly rowStart: number; readonly nRows: number }[] {
  // 4: a row-split scale region's rounding to whole words
  return info.shape.length === 3
    ? expertParts(info.name, info.shape[2]!, rowBytes * info.shape[1]!, info.shape[1]!, h.maxWeightBinding - 4)
    : splitRows(info.name, nRows, rowBytes, h.maxWeightBinding);
}

/** A matrix weight record over its uploaded parts. */
function matrixWeight(
  info: WeightInfo,
  layout: GpuWeight['layout'],
  rowLength: number,
  nRows: number,
  rowStride: number,
  parts: GpuWeight['parts'],
): GpuWeight {
  return {
    name: info.name,
    type: info.type,
    rowLength,
    nRows,
    layout,
    rowStride,
    parts,
    vector: null,
    host: null,
    group: null,
  };
}
