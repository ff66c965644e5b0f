/**
 * The IQ codebook grids load on demand (src/quant/iq-grids.ts): before `loadIqGrids` the IQ dequantizers fail with a
 * clear error instead of reading an empty table, and after it they decode.
 */

import { describe, expect, it, vi } from 'vitest';

describe('IQ grids', () => {
  it('are absent until loadIqGrids, then every IQ type dequantizes', async () => {
    vi.resetModules(); // a fresh module graph: the setup file's preload does not apply
    const grids = await import('../../../src/quant/iq-grids.js');
    const { getQuantType } = await import('../../../src/quant/index.js');
    const { GgmlType } = await import('../../../src/gguf/types.js');
    const t = getQuantType(GgmlType.IQ2_XXS);
    const block = new Uint8Array(t.blockBytes);
    const out = new Float32Array(t.blockElements);
    // (a fresh module graph has its own LlmError class: check the error's code and message)
    expect(() => t.dequantizeRow(block, out, out.length)).toThrow(
      expect.objectContaining({ code: 'invalid-request', message: expect.stringMatching(/loadIqGrids/) }),
    );
    await grids.loadIqGrids();
    for (const type of grids.IQ_GRID_TYPES) {
      const q = getQuantType(type);
      expect(() =>
        q.dequantizeRow(new Uint8Array(q.blockBytes), new Float32Array(q.blockElements), q.blockElements),
      ).not.toThrow();
    }
  });
});
