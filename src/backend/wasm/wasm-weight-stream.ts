/**
 * Streaming a weight into WASM memory (`Ops.beginWeight` of the WASM backend): the weight's region is placed first,
 * the loader reads the file straight into it piece by piece, and each committed piece (whole row pairs) is rearranged
 * into the row-pair layout (row-pairs.ts) in place while the next piece is being read — no copy of the tensor is
 * made outside WASM memory, and the rearrangement overlaps the read instead of following it.
 */

import { LlmError } from '../../errors.js';
import { GGML_TYPES } from '../../gguf/types.js';
import { getQuantType } from '../../quant/index.js';
import type { Weight, WeightInfo, WeightStream } from '../ops.js';
import { FUSED_KERNELS, type KernelExports } from './kernel-exports.js';
import { ROW_PAIR_TYPES, storedRows } from './row-pairs.js';
import type { WasmHeap } from './wasm-heap.js';

/** A weight in WASM memory: GGUF rows [nRows, rowBytes], or row pairs (pairBlockBytes > 0; row-pairs.ts). */
export interface WasmWeight extends Weight {
  readonly byteOffset: number;
  readonly rowBytes: number;
  /** Block bytes of the row-pair layout; 0 for GGUF rows. */
  readonly pairBlockBytes: number;
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
  const pairBlockBytes = ROW_PAIR_TYPES.get(info.type) ?? 0;
  const region = h.heap.alloc(pairBlockBytes ? storedRows(nRows) * rowBytes : byteLength, `weight ${info.name}`);
  const scratch = pairBlockBytes ? h.scratch(2 * rowBytes) : 0; // 2·rowBytes: one pair
  let committed = 0;
  /** A piece must be whole rows inside the tensor, starting on a pair (even row). */
  const check = (offset: number, length: number): void => {
    if (
      !(Number.isSafeInteger(offset) && Number.isSafeInteger(length)) ||
      offset < 0 ||
      length < 0 ||
      offset + length > byteLength ||
      offset % (2 * rowBytes) !== 0 ||
      (length % rowBytes !== 0 && offset + length !== byteLength)
    ) {
      throw new LlmError(
        'invalid-request',
        `uploading ${info.name}: piece [${offset}, ${offset + length}) is not whole row pairs of its ${byteLength} bytes`,
        { details: { tensor: info.name, offset, length } },
      );
    }
  };
  return {
    byteLength,
    target: (offset, length) => {
      check(offset, length);
      const at = region.byteOffset + offset;
      return h.heap.u8.subarray(at, at + length); // (length) bytes of GGUF rows
    },
    commit: (offset, length) => {
      check(offset, length);
      if (offset !== committed) {
        throw new LlmError('invalid-request', `uploading ${info.name}: piece at ${offset} committed out of order`, {
          details: { tensor: info.name, offset, committed },
        });
      }
      // The last piece may end on an odd row: its zero partner is the padding row reserved after it.
      if (pairBlockBytes)
        h.k.interleave_row_pairs(region.byteOffset + offset, length / rowBytes, rowBytes, pairBlockBytes, scratch);
      committed += length;
    },
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
        vectorOffset: -1,
      };
      return w;
    },
    cancel: () => undefined, // a bump heap frees nothing alone; destroy() releases the whole memory
  };
}
