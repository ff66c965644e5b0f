/**
 * The quant snippet gemv_sg is built with: the layout's own snippet, followed by the generic `dot_chunk`
 * (shaders/common/dot_chunk.wgsl, eight load4 calls) where the snippet has no fast one (registry `webgpu.chunkDot`),
 * then the Q8-activation path: common/x_q8.wgsl and the type's `<snippet>_dot4.wgsl` (dot_chunk_q8 on dot4I8Packed)
 * when asked for and the type has one, else common/x_q8_none.wgsl (the same names, no packed-integer builtins).
 */

import { shaderSource } from './compose.js';
import { GEMV_SG_ROWS_PER_SUBGROUP } from './gemv-sg-params.js';
import type { GpuQuantLayout } from './upload.js';

const genericChunk = shaderSource('common/dot_chunk');

/** Layouts (by snippet name) with a Q8-activation chunk, shaders/quant/<name>_dot4.wgsl. */
const INT8_DOT_SNIPPETS: ReadonlySet<string> = new Set(['q4_0_rows', 'q8_0_rows']);

/** True when gemv_sg runs `l` with Q8 activations on a device with packed 4×8-bit dot products (`int8Dot`). */
export function gemvSgInt8(l: GpuQuantLayout, int8Dot: boolean): boolean {
  return int8Dot && INT8_DOT_SNIPPETS.has(l.name);
}

/**
 * `l` with the WGSL gemv_sg composes (see the file header); `int8Dot`: the device has packed 4×8-bit integer dot
 * products and the host wants Q8 activations (the layout is then named `<name>_dot4`: its own pipelines).
 */
export function gemvSgQuant(l: GpuQuantLayout, int8Dot = false): GpuQuantLayout {
  const int8 = gemvSgInt8(l, int8Dot);
  return {
    type: l.type,
    name: int8 ? `${l.name}_dot4` : l.name,
    get wgsl(): string {
      const chunk = l.chunkDot ? '' : `\n${genericChunk}`;
      const q8 = int8
        ? `${shaderSource('common/x_q8')}\n${shaderSource(`quant/${l.name}_dot4`)}`
        : shaderSource('common/x_q8_none');
      return `${l.wgsl}${chunk}\n${q8}`;
    },
    blockElements: l.blockElements,
    blockBytes: l.blockBytes,
    headToTail: l.headToTail,
    groupBlocks: l.groupBlocks,
    rowSplit: l.rowSplit,
    chunkDot: l.chunkDot,
    recode: l.recode,
  };
}

/** gemv_sg's R override for `l`: rows per subgroup sharing each chunk of x (1 with the generic dot_chunk). */
export function gemvSgRowsPerSubgroup(l: GpuQuantLayout): number {
  return l.chunkDot ? GEMV_SG_ROWS_PER_SUBGROUP : 1;
}
