/**
 * Per-layer KV geometry (issue #13) on the cpu reference and the WASM backend: see `helpers/kv-per-layer.ts`.
 */

import { describe, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { expectGeometryRefused, expectPerLayerKv } from '../helpers/kv-per-layer.js';

for (const [name, make] of [
  ['cpu', () => Promise.resolve(createCpuOps())],
  ['wasm', () => createWasmOps({ threads: 1 })],
] as const) {
  describe(`${name}: a KV cache with per-layer geometry`, () => {
    it('gives each layer what a cache of that layer alone gives; persists and copies per layer', async () => {
      const ops = await make();
      await expectPerLayerKv(ops, 1e-5, 4);
      ops.destroy();
    });

    it('refuses attention whose geometry is not the layer’s', async () => {
      const ops = await make();
      expectGeometryRefused(ops);
      ops.destroy();
    });
  });
}
