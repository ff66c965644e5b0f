/**
 * The quant snippet gemv_sg is built with: the layout's own snippet, followed by the generic `dot_chunk`
 * (shaders/common/dot_chunk.wgsl, eight load4 calls) where the snippet has no fast one (registry `webgpu.chunkDot`).
 */

import { shaderSource } from './compose.js';
import { GEMV_SG_ROWS_PER_SUBGROUP } from './gemv-sg-params.js';
import type { GpuQuantLayout } from './upload.js';

const genericChunk = shaderSource('common/dot_chunk');

/** `l` with the WGSL gemv_sg composes: its snippet, plus the generic dot_chunk when it has none. */
export function gemvSgQuant(l: GpuQuantLayout): GpuQuantLayout {
  if (l.chunkDot) return l;
  return {
    type: l.type,
    name: l.name,
    get wgsl(): string {
      return `${l.wgsl}\n${genericChunk}`;
    },
    blockElements: l.blockElements,
    blockBytes: l.blockBytes,
    headToTail: l.headToTail,
    groupBlocks: l.groupBlocks,
    rowSplit: l.rowSplit,
    chunkDot: false,
  };
}

/** gemv_sg's R override for `l`: rows per subgroup sharing each chunk of x (1 with the generic dot_chunk). */
export function gemvSgRowsPerSubgroup(l: GpuQuantLayout): number {
  return l.chunkDot ? GEMV_SG_ROWS_PER_SUBGROUP : 1;
}
