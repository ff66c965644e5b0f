/**
 * Streaming a weight into WASM memory (`Ops.beginWeight` of the WASM backend): the weight's region is placed first,
 * the loader reads the file straight into it piece by piece, and each committed piece (whole row pairs, or 4-row
 * groups) is rearranged into the row-pair layout (row-pairs.ts) or the 4-row layout (rows4-layout.ts) in place while
 * the next piece is being read — no copy of the tensor is made outside WASM memory, and the rearrangement overlaps
 * the read instead of following it.
 */

import { LlmError } from '../../errors.js';
import { GGML_TYPES } from '../../gguf/types.js';
import { getQuantType } from '../../quant/index.js';
import type { Weight, WeightInfo, WeightStream } from '../ops.js';
import { FUSED_KERNELS, type KernelExports } from './kernel-exports.js';
import { ROW_PAIR_TYPES, storedRows } from './row-pairs.js';
import { type Rows4Block, rows4StoredRows } from './rows4-layout.js';
import type { WasmHeap } from './wasm-heap.js';

/**
 * A weight in WASM memory: GGUF rows [nRows, rowBytes], row pairs (pairBlockBytes > 0; row-pairs.ts) or 4-row groups
 * (rows4 set; rows4-layout.ts).
 */
export interface WasmWeight extends Weight {
  readonly byteOffset: number;
  readonly rowBytes: number;
  /** Block bytes of the row-pair layout; 0 for GGUF rows. */
  readonly pairBlockBytes: number;
  /** Block shape of the 4-row-group layout; null for the other layouts. */
  readonly rows4: Rows4Block | null;
  /** f32 copy for use as a vector (norm weights, biases), made on first use. */
  vectorOffset: number;
}

/** A stream into WASM memory; `byteLength` is the tensor's size in GGUF layout. */
export interface WasmWeightStream extends WeightStream {
  readonly byteLength: number;
}

/** What the stream needs of the backend. */
interface WasmWeightHost {
  readonly heap: WasmHeap;
  readonly k: KernelExports;
  /** Byte offset of a scratch region of at least `bytes` bytes (placed on first need, then reused). */
  scratch(bytes: number): number;
}

/**
 * Validates `info` (unknown type → `unsupported-type`, a row length off the block size → `gguf-invalid`), places its
 * region (and the row-pair scratch: nothing is placed once reads are in flight) and returns the stream filling it.
 */
export function beginWasmWeight(h: WasmWeightHost, info: WeightInfo): WasmWeightStream {
  const geometry = GGML_TYPES.get(info.type);
  if (!geometry) {
    throw new LlmError('unsupported-type', `uploading ${info.name}: unknown ggml type id ${info.type}`, {
      details: { tensor: info.name, type: info.type },
    });
  }
  if (!FUSED_KERNELS.has(info.type)) getQuantType(info.type); // throws unsupported-type naming it
  const rowLength = info.shape[0];
  const nRows = info.shape.slice(1).reduce((a, b) => a * b, 1);
  if (rowLength % geometry.blockElements !== 0) {
    throw new LlmError(
      'gguf-invalid',
      `uploading ${info.name}: row length ${rowLength} is not a multiple of the ${geometry.name} block size ${geometry.blockElements}`,
      { details: { tensor: info.name, rowLength, blockElements: geometry.blockElements } },
    );
  }
  const rowBytes = (rowLength / geometry.blockElements) * geometry.blockBytes;
  const byteLength = rowBytes * nRows;
  // 4-row groups (2-D weights of a rows4 type, or 3-D expert stacks whose experts are whole groups, on a build whose
  // 4-row kernels run), else row pairs where the registry says so.
  const block = FUSED_KERNELS.get(info.type)?.rows4Block ?? null;
  const groups = info.shape.length <= 2 || (info.shape[1] ?? 0) % 4 === 0; // expert-matmul.ts addresses an expert's groups
  const rows4 = groups && h.k.rows4_kernels?.() === 1 ? block : null;
  const pairBlockBytes = rows4 ? 0 : (ROW_PAIR_TYPES.get(info.type) ?? 0);
  const groupRows = rows4 ? 4 : 2; // rows rearranged together
  const stored = rows4 ? rows4StoredRows(nRows) : pairBlockBytes ? storedRows(nRows) : nRows;
  const region = h.heap.alloc(stored * rowBytes, `weight ${info.name}`);
  const scratch = rows4 || pairBlockBytes ? h.scratch(groupRows * rowBytes) : 0; // one group's rows
  let committed = 0;
  /** A piece must be whole rows inside the tensor, starting on a group (a row pair or 4-row group). */
  const check = (offset: number, length: number): void => {
    if (
      !(Number.isSafeInteger(offset) && Number.isSafeInteger(length)) ||
      offset < 0 ||
      length < 0 ||
      offset + length > byteLength ||
      offset % (groupRows * rowBytes) !== 0 ||
      (length % rowBytes !== 0 && offset + length !== byteLength)
    ) {
      throw new LlmError(
        'invalid-request',
        `uploading ${info.name}: piece [${offset}, ${offset + length}) is not whole ${groupRows}-row groups of its ${byteLength} bytes`,
        { details: { tensor: info.name, offset, length } },
      );
    }
  };
  const blockElements = geometry.blockElements;
  // The 4-row interleave's field check is the whole non-finite scan when those fields are exactly the type's scales.
  const scalesChecked = rows4 !== null && fieldsAreScales(rows4, getQuantType(info.type).f16Scales);
  const commit = (offset: number, length: number): number => {
    check(offset, length);
    if (offset !== committed) {
      throw new LlmError('invalid-request', `uploading ${info.name}: piece at ${offset} committed out of order`, {
        details: { tensor: info.name, offset, committed },
      });
    }
    let bad = -1; // first non-finite block of the piece, GGUF order (rows4 with the check only)
    // The last piece may end inside a group: its zero rows are the padding reserved after it.
    if (rows4) {
      const { blockBytes, head, tail, flip, recode } = rows4;
      bad =
        h.k.interleave_rows4(
          region.byteOffset + offset,
          length / rowBytes,
          rowBytes,
          blockBytes,
          head,
          tail,
          scratch,
          flip,
          recode,
          scalesChecked ? 1 : 0,
        ) ?? -1;
    } else if (pairBlockBytes)
      h.k.interleave_row_pairs(region.byteOffset + offset, length / rowBytes, rowBytes, pairBlockBytes, scratch);
    committed += length;
    return bad < 0 ? -1 : bad * blockElements;
  };
  return {
    byteLength,
    target: (offset, length) => {
      check(offset, length);
      const at = region.byteOffset + offset;
      return h.heap.u8.subarray(at, at + length); // (length) bytes of GGUF rows
    },
    commit: (offset, length) => {
      commit(offset, length);
    },
    ...(scalesChecked ? { commitChecked: commit } : {}),
    finish: async () => {
      if (committed !== byteLength) {
        throw new LlmError('invalid-request', `uploading ${info.name}: ${committed} of its ${byteLength} bytes given`, {
          details: { tensor: info.name, committed, byteLength },
        });
      }
      const w: WasmWeight = {
        name: info.name,
        type: info.type,
        rowLength,
        nRows,
        byteOffset: region.byteOffset,
        rowBytes,
        pairBlockBytes,
        rows4,
        vectorOffset: -1,
      };
      return w;
    },
    cancel: () => undefined, // a bump heap frees nothing alone; destroy() releases the whole memory
  };
}

/**
 * Whether the f16 fields that open and close a block of this 4-row shape are exactly the type's f16 scales (byte
 * offsets `f16Scales`), i.e. whether interleave_rows4's field check is the whole non-finite scan of the type.
 */
function fieldsAreScales(block: Rows4Block, f16Scales: readonly number[]): boolean {
  const fields: number[] = [];
  for (let f = 0; f < block.head; f++) fields.push(2 * f);
  for (let f = 0; f < block.tail; f++) fields.push(block.blockBytes - 2 * (block.tail - f));
  return fields.length === f16Scales.length && fields.every((at) => f16Scales.includes(at));
}
