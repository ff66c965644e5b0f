/**
 * Weight repacking for the GPU, one registry entry per GgmlType. GGUF blocks are made word aligned at upload:
 * types whose block starts with a lone f16 scale before byte-aligned quants (Q5_0, IQ4_NL) move that scale to the
 * end of the block; every block is zero-padded to whole u32 words. Q4_0 and Q8_0 go further: groups of four blocks
 * with the quants first and the four scales after them, 16-byte aligned, so kernels load quants as vec4<u32>. Rows stay contiguous, so a row is
 * `rowWords` words and a tensor bigger than one storage binding is split into parts of whole rows. The hardware
 * kernels' row-split form (GpuQuantLayout.rowSplit) keeps the GGUF's bytes: rows of bodies, then one scale region.
 * The software kernels' re-coded form (GpuQuantLayout.recode: Q5_K, Q6_K) rewrites each block into aligned whole quants.
 * The per-type word layout is documented in each shaders/quant/<type>.wgsl header, which decodes it.
 */

import { iqGrids } from '../../quant/iq-grids.js';
import { LlmError } from '../../errors.js';
import { GgmlType } from '../../gguf/types.js';
import { QUANT_TYPES, type QuantType } from '../../quant/index.js';
import { BLOCK_RECODES, type BlockRecode } from './block-recode.js';
import { shaderSource } from './compose.js';

/** How one ggml type is laid out on the GPU. */
export interface GpuQuantLayout {
  readonly type: GgmlType;
  /** Snippet name, lower case (`q4_k`); part of pipeline keys. */
  readonly name: string;
  /** WGSL defining `load4`/`load1` over the repacked words. */
  readonly wgsl: string;
  readonly blockElements: number;
  /** Bytes of one GGUF block. */
  readonly blockBytes: number;
  /** Leading bytes of a GGUF block moved to its end (the f16 scale), so the quants start word aligned. */
  readonly headToTail: number;
  /**
   * Blocks per 16-byte-aligned group (Q4_0, Q8_0: 4): a group holds the blocks' quants back to back, then their
   * four f16 scales in two words and two words of padding, so a block's quants load as whole vec4<u32>; rows are
   * padded with zero blocks to whole groups. 0 = plain blocks.
   */
  readonly groupBlocks: number;
  /**
   * Row-split layout (the hardware kernels' Q4_0, Q8_0, Q5_0, IQ4_NL): two regions per binding (a weight part, or a
   * group member's range). First every row's block bodies (the block minus its leading f16 scale, whole words) back
   * to back — a row is `rowWords` words, 16-byte aligned for every row length whose bodies are (Q4_0, IQ4_NL: 16 B
   * per block, Q8_0: 32 B, Q5_0: 20 B, so K a multiple of 128) — then, right-justified at the binding's end, every
   * block's f16 scale in reverse order: block b of row r (h = r·nb + b) is half 2·E − 1 − h of the binding's E words.
   * Exactly the GGUF's bytes, reordered. The snippets find a row's scales from its first word and the binding's span
   * (`weight_span`: the binding's length, or gemv_io's segments of a Q|K|V / gate|up buffer).
   */
  readonly rowSplit: boolean;
  /** The snippet defines gemv_sg's fast `dot_chunk` (registry `webgpu.chunkDot`, for the layout that file serves). */
  readonly chunkDot: boolean;
  /**
   * The software kernels' re-coded block (registry `webgpu.softwareRecode`, block-recode.ts): every block becomes
   * `recode.words` words, rows contiguous; null for the plain, grouped and row-split layouts.
   */
  readonly recode: BlockRecode | null;
}

/**
 * The layout of `t` from its registry record (src/quant): plain block, hardware row-split or software re-coded
 * (`recode`) form.
 */
function layoutOf(t: QuantType, rowSplit: boolean, recode: BlockRecode | null = null): GpuQuantLayout {
  const w = t.webgpu;
  const name = recode?.name ?? (rowSplit ? `${w.snippet}_rows` : w.snippet);
  return {
    type: t.id,
    name,
    // The snippet, after the lookup tables it indexes (the IQ grids: generated `const` arrays, loaded with a model
    // that needs them — read when a pipeline is built, not here).
    get wgsl(): string {
      const tables = (w.tables ?? []).map((table) => iqGrids().wgsl[table] ?? shaderSource(`quant/tables/${table}`));
      return [...tables, shaderSource(`quant/${name}`)].join('\n');
    },
    blockElements: t.blockElements,
    blockBytes: t.blockBytes,
    headToTail: w.headToTail,
    groupBlocks: rowSplit ? 0 : w.groupBlocks,
    rowSplit,
    chunkDot: w.chunkDot === true && recode === null && (rowSplit || w.hardwareRows !== true),
    recode,
  };
}

/**
 * Every type the WebGPU backend runs (the CPU backend's set), keyed by GgmlType; from the quant registry. The plain
 * block layouts: both kernel sets' unless HARDWARE_QUANT_LAYOUTS or SOFTWARE_QUANT_LAYOUTS say otherwise.
 */
export const GPU_QUANT_LAYOUTS: ReadonlyMap<GgmlType, GpuQuantLayout> = new Map(
  QUANT_TYPES.map((t) => [t.id, layoutOf(t, false)]),
);

/**
 * Where the hardware kernel set lays a type out differently (`webgpu.hardwareRows` in the registry): row-split, so
 * the kernels load exactly the GGUF's bytes (the grouped/padded block layouts cost +5.9 … +11 % and serve the
 * software kernels' vec4 loads).
 */
export const HARDWARE_QUANT_LAYOUTS: ReadonlyMap<GgmlType, GpuQuantLayout> = new Map(
  QUANT_TYPES.filter((t) => t.webgpu.hardwareRows === true).map((t) => [t.id, layoutOf(t, true)]),
);

/**
 * Where the software kernel set re-codes a type's blocks at upload (`webgpu.softwareRecode`: Q5_K, Q6_K as byte quants,
 * one word per four quants where the GGUF block needs two words and a shift, mask and join per four).
 */
export const SOFTWARE_QUANT_LAYOUTS: ReadonlyMap<GgmlType, GpuQuantLayout> = new Map(
  QUANT_TYPES.flatMap((t) =>
    t.webgpu.softwareRecode ? [[t.id, layoutOf(t, false, BLOCK_RECODES[t.webgpu.softwareRecode])] as const] : [],
  ),
);

/**
 * The GPU layout of `type` for a kernel set (default: the software set's, the larger where they differ: the memory
 * plan's conservative estimate).
 * @throws LlmError('unsupported-type') for a type the WebGPU backend has no snippet for.
 */
export function getGpuQuantLayout(
  type: GgmlType,
  tensor = 'a tensor',
  kernels: 'hardware' | 'software' = 'software',
): GpuQuantLayout {
  const l =
    (kernels === 'hardware' ? HARDWARE_QUANT_LAYOUTS : SOFTWARE_QUANT_LAYOUTS).get(type) ?? GPU_QUANT_LAYOUTS.get(type);
  if (!l) {
    throw new LlmError(
      'unsupported-type',
      `uploading ${tensor}: ggml type ${GgmlType[type] ?? type} is not supported by the WebGPU backend; supported: ` +
        `${[...GPU_QUANT_LAYOUTS.values()].map((x) => x.name).join(', ')}. Use a model quantized to one of these.`,
      { details: { tensor, type: GgmlType[type] ?? String(type) } },
    );
  }
  return l;
}

/** u32 words of one repacked row of `rowLength` elements (row-split: its bodies only, the row stride). */
export function rowWords(l: GpuQuantLayout, rowLength: number): number {
  const nBlocks = rowLength / l.blockElements;
  if (l.rowSplit) return (nBlocks * (l.blockBytes - l.headToTail)) / 4;
  if (l.recode) return nBlocks * l.recode.words;
  if (l.groupBlocks > 0) return Math.ceil(nBlocks / l.groupBlocks) * groupWords(l);
  return l.blockElements === 1 ? Math.ceil((rowLength * l.blockBytes) / 4) : nBlocks * Math.ceil(l.blockBytes / 4);
}

/** Bytes one row occupies on the GPU (row-split: its bodies and its scales, exactly the GGUF's row). */
export function rowBytes(l: GpuQuantLayout, rowLength: number): number {
  return rowWords(l, rowLength) * 4 + (l.rowSplit ? (rowLength / l.blockElements) * l.headToTail : 0);
}

/** Bytes of the scale region at the end of a row-split binding of `nRows` rows (whole words); 0 for other layouts. */
export function scaleBytes(l: GpuQuantLayout, rowLength: number, nRows: number): number {
  return l.rowSplit ? Math.ceil((nRows * (rowLength / l.blockElements) * l.headToTail) / 4) * 4 : 0;
}

/** Bytes of a binding holding `nRows` repacked rows (row-split: the bodies, then the scale region). */
export function partBytes(l: GpuQuantLayout, rowLength: number, nRows: number): number {
  return nRows * rowWords(l, rowLength) * 4 + scaleBytes(l, rowLength, nRows);
}

/** u32 words of one group of a grouped layout: the quants of groupBlocks blocks, two words of scales, two of padding. */
function groupWords(l: GpuQuantLayout): number {
  return (l.groupBlocks * (l.blockBytes - l.headToTail)) / 4 + 4;
}

/** A run of whole rows of a weight, small enough for one storage binding. */
export interface RowPart {
  readonly rowStart: number;
  readonly nRows: number;
}

/**
 * Splits `nRows` rows of `rowBytes` bytes into parts of at most `maxBindingBytes`.
 * @throws LlmError('out-of-memory') when a single row exceeds the binding limit.
 */
export function splitRows(name: string, nRows: number, rowBytes: number, maxBindingBytes: number): RowPart[] {
  const perPart = Math.floor((maxBindingBytes - 4) / rowBytes); // 4: a row-split scale region's rounding to words
  if (perPart < 1) {
    throw new LlmError(
      'out-of-memory',
      `uploading ${name}: one row is ${rowBytes} bytes, over the device's storage binding limit of ${maxBindingBytes} bytes`,
      { details: { tensor: name, rowBytes, maxStorageBufferBindingSize: maxBindingBytes } },
    );
  }
  const parts: RowPart[] = [];
  for (let r = 0; r < nRows; r += perPart) parts.push({ rowStart: r, nRows: Math.min(perPart, nRows - r) });
  return parts;
}

/**
 * Repacks rows [rowStart, rowStart + nRows) of a GGUF tensor (`data`: whole rows of blocks) into aligned words.
 * Returns bytes ready for `writeBuffer` (a view of `data` itself when the GGUF layout is already aligned); row-split:
 * the part's whole binding, `partBytes` long (bodies, then the scale region).
 */
export function repackRows(l: GpuQuantLayout, data: Uint8Array, rowLength: number, part: RowPart): Uint8Array {
  const srcRowBytes = (rowLength / l.blockElements) * l.blockBytes;
  const dstRowBytes = rowWords(l, rowLength) * 4;
  const src = data.subarray(part.rowStart * srcRowBytes, (part.rowStart + part.nRows) * srcRowBytes);
  if (l.recode) {
    const dst = new Uint8Array(part.nRows * dstRowBytes); // (nRows, rowWords·4) bytes of re-coded blocks
    l.recode.recode(src, dst, part.nRows * (rowLength / l.blockElements));
    return dst;
  }
  if (srcRowBytes === dstRowBytes && l.headToTail === 0 && l.groupBlocks === 0) return src; // already word aligned: upload as is
  if (l.rowSplit) {
    const dst = new Uint8Array(partBytes(l, rowLength, part.nRows)); // (nRows, rowWords·4) bytes of bodies, then scales
    repackBodies(l, src, dst, rowLength / l.blockElements, part.nRows);
    writeScales(l, src, rowLength, part.nRows, 0, dst);
    return dst;
  }
  const dst = new Uint8Array(part.nRows * dstRowBytes); // (nRows, rowWords·4) bytes
  if (l.groupBlocks > 0) {
    repackGrouped(l, src, dst, rowLength / l.blockElements, part.nRows, dstRowBytes);
    return dst;
  }
  if (l.blockElements === 1) {
    for (let r = 0; r < part.nRows; r++) dst.set(src.subarray(r * srcRowBytes, (r + 1) * srcRowBytes), r * dstRowBytes);
    return dst;
  }
  const bb = l.blockBytes;
  const head = l.headToTail;
  const dstBlock = Math.ceil(bb / 4) * 4;
  const nBlocks = part.nRows * (rowLength / l.blockElements);
  for (let b = 0; b < nBlocks; b++) {
    const s = b * bb;
    const d = b * dstBlock;
    for (let j = head; j < bb; j++) dst[d + j - head] = src[s + j];
    for (let j = 0; j < head; j++) dst[d + bb - head + j] = src[s + j];
  }
  return dst;
}

/**
 * Grouped layout (Q4_0, Q8_0): per row, groups of `groupBlocks` blocks — their quants (the block minus its leading
 * f16 scale) back to back, then the scales as f16 in order, then zero padding to whole 16 bytes; missing blocks of
 * the last group stay zero. `dst` is zero-filled, (nRows, dstRowBytes) bytes.
 */
function repackGrouped(
  l: GpuQuantLayout,
  src: Uint8Array,
  dst: Uint8Array,
  nBlocks: number,
  nRows: number,
  dstRowBytes: number,
): void {
  const bb = l.blockBytes;
  const qb = bb - l.headToTail; // quant bytes per block
  const gBytes = groupWords(l) * 4;
  for (let r = 0; r < nRows; r++) {
    for (let b = 0; b < nBlocks; b++) {
      const s = (r * nBlocks + b) * bb;
      const g = r * dstRowBytes + Math.floor(b / l.groupBlocks) * gBytes;
      const j = b % l.groupBlocks;
      dst.set(src.subarray(s + l.headToTail, s + bb), g + j * qb);
      dst[g + l.groupBlocks * qb + 2 * j] = src[s]!;
      dst[g + l.groupBlocks * qb + 2 * j + 1] = src[s + 1]!;
    }
  }
}

/** Row-split layout (see GpuQuantLayout.rowSplit): the bodies of `nRows` GGUF rows (`src`) into `dst` from byte 0. */
function repackBodies(l: GpuQuantLayout, src: Uint8Array, dst: Uint8Array, nBlocks: number, nRows: number): void {
  const bb = l.blockBytes;
  const head = l.headToTail;
  const body = bb - head;
  for (let b = 0; b < nRows * nBlocks; b++) dst.set(src.subarray(b * bb + head, (b + 1) * bb), b * body);
}

/**
 * Row-split layout: the f16 scales of `nRows` GGUF rows (`src`), the first being row `firstRow` of its binding, into
 * `region` — the binding's scale region, ending where the binding ends (see GpuQuantLayout.rowSplit: reversed,
 * block h of the binding at bytes region.length − 2 − 2h). Whole rows: the streamed upload fills it piece by piece.
 */
export function writeScales(
  l: GpuQuantLayout,
  src: Uint8Array,
  rowLength: number,
  nRows: number,
  firstRow: number,
  region: Uint8Array,
): void {
  const nb = rowLength / l.blockElements;
  const bb = l.blockBytes;
  const end = region.length - 2;
  for (let b = 0; b < nRows * nb; b++) {
    const at = end - 2 * (firstRow * nb + b);
    region[at] = src[b * bb]!;
    region[at + 1] = src[b * bb + 1]!;
  }
}

/** Converts a 1-D F32/F16/BF16 tensor (norm weights, biases) to f32 for the kernels that read vectors directly. */
export function vectorToF32(name: string, type: GgmlType, data: Uint8Array, n: number): Float32Array {
  const out = new Float32Array(n); // (n) f32
  const dv = new DataView(data.buffer, data.byteOffset, data.byteLength);
  if (type === GgmlType.F32) {
    for (let i = 0; i < n; i++) out[i] = dv.getFloat32(4 * i, true);
  } else if (type === GgmlType.F16) {
    for (let i = 0; i < n; i++) out[i] = halfToFloat(dv.getUint16(2 * i, true));
  } else if (type === GgmlType.BF16) {
    const u = new Uint32Array(1);
    const f = new Float32Array(u.buffer);
    for (let i = 0; i < n; i++) {
      u[0] = dv.getUint16(2 * i, true) << 16;
      out[i] = f[0];
    }
  } else {
    throw new LlmError(
      'unsupported-type',
      `uploading ${name}: a 1-D tensor of type ${GgmlType[type] ?? type} is not supported (norm and bias vectors must be F32, F16 or BF16)`,
      { details: { tensor: name, type: GgmlType[type] ?? String(type) } },
    );
  }
  return out;
}

/** IEEE half → number. */
function halfToFloat(h: number): number {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
