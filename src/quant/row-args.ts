/**
 * Argument checks shared by every `QuantType`: a row must be whole blocks, the source must hold them and the
 * destination must have room. Failures are `LlmError('invalid-request')` naming the type, the step and the numbers.
 */

import { LlmError } from '../errors.js';

/** Geometry a check needs. */
export interface BlockGeometry {
  readonly name: string;
  readonly blockElements: number;
  readonly blockBytes: number;
}

/** Throws unless `nElements` is whole blocks, `src` holds them and `dst` has room; returns the block count. */
export function checkDequantizeArgs(t: BlockGeometry, src: Uint8Array, dst: Float32Array, nElements: number): number {
  if (!Number.isInteger(nElements) || nElements < 0 || nElements % t.blockElements !== 0) {
    throw new LlmError(
      'invalid-request',
      `dequantize ${t.name}: element count ${nElements} is not a multiple of the block size ${t.blockElements}`,
      { details: { type: t.name, nElements, blockElements: t.blockElements } },
    );
  }
  const nBlocks = nElements / t.blockElements;
  const needBytes = nBlocks * t.blockBytes;
  if (src.length < needBytes) {
    throw new LlmError(
      'invalid-request',
      `dequantize ${t.name}: ${nElements} elements need ${needBytes} bytes of blocks but the source has ${src.length}`,
      { details: { type: t.name, nElements, needBytes, haveBytes: src.length } },
    );
  }
  if (dst.length < nElements) {
    throw new LlmError(
      'invalid-request',
      `dequantize ${t.name}: destination holds ${dst.length} floats, ${nElements} are needed`,
      { details: { type: t.name, nElements, dstLength: dst.length } },
    );
  }
  return nBlocks;
}

/** Throws unless `src.length` is whole blocks and `dst` can hold their bytes; returns the block count. */
export function checkQuantizeArgs(t: BlockGeometry, src: Float32Array, dst: Uint8Array): number {
  if (src.length % t.blockElements !== 0) {
    throw new LlmError(
      'invalid-request',
      `quantize ${t.name}: row length ${src.length} is not a multiple of the block size ${t.blockElements}`,
      { details: { type: t.name, nElements: src.length, blockElements: t.blockElements } },
    );
  }
  const nBlocks = src.length / t.blockElements;
  const needBytes = nBlocks * t.blockBytes;
  if (dst.length < needBytes) {
    throw new LlmError(
      'invalid-request',
      `quantize ${t.name}: ${src.length} elements need ${needBytes} bytes but the destination has ${dst.length}`,
      { details: { type: t.name, needBytes, haveBytes: dst.length } },
    );
  }
  return nBlocks;
}
