/**
 * gpt-oss's per-expert output biases on the WASM backend (`addExpertBias`): each (token, slot) row gets its expert's
 * bias row through the SIMD `add_rows` kernel (src/backend/wasm/expert-bias-rows.ts), bit-identical to f32 sums of
 * the plain-TS loop, with row lengths off a multiple of 4 (the kernel's scalar tail) and several tokens; and the
 * adapter hands `add_rows` byte addresses (or is absent for a build without it, leaving the plain-TS loop).
 */

import v8 from 'node:v8';
import { describe, expect, it, vi } from 'vitest';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { wasmAddRow } from '../../src/backend/wasm/expert-bias-rows.js';
import type { KernelExports } from '../../src/backend/wasm/kernel-exports.js';
import { GgmlType } from '../../src/gguf/types.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describe('wasm addExpertBias', () => {
  it('wasmAddRow: add_rows(dst = a = row, b = bias row) at byte addresses; null without the kernel', () => {
    const add = vi.fn();
    const row = wasmAddRow({ add_rows: add } as unknown as KernelExports);
    row!(10, 1000, 7);
    expect(add).toHaveBeenCalledWith(40, 40, 4000, 7);
    expect(wasmAddRow({} as KernelExports)).toBeNull();
  });

  for (const cols of [7, 64]) {
    it(`adds each slot's expert bias row, bit-identical to f32 sums (cols ${cols}, 3 tokens × 2 slots)`, async () => {
      const ops = await createWasmOps({ threads: 1 });
      try {
        const [nExperts, nUsed, n] = [5, 2, 3];
        const bias = Float32Array.from({ length: nExperts * cols }, (_, i) => Math.sin(i + 1) * 3);
        const bw = await ops.uploadWeight(
          { name: 'ffn_gate_exps.bias', type: GgmlType.F32, shape: [nExperts * cols] },
          new Uint8Array(bias.buffer),
        );
        const ids = [4, 0, 2, 2, 1, 3]; // [n, nUsed]
        const x = Float32Array.from({ length: n * nUsed * cols }, (_, i) => Math.cos(i) * 0.1);
        const out = ops.createActivation('out', n * nUsed, cols);
        const idAct = ops.createActivation('ids', n, nUsed);
        ops.beginStep({ tokens: Int32Array.from({ length: n * nUsed }, (_, i) => i), startPos: 0, slot: 0 });
        ops.setRows(out, x, n * nUsed);
        ops.setRows(idAct, Float32Array.from(ids), n);
        ops.addExpertBias(out, bw, idAct, n);
        ops.endStep();
        const got = await ops.read(out, n * nUsed);
        const want = x.map((v, i) => Math.fround(v + bias[ids[Math.floor(i / cols)]! * cols + (i % cols)]!));
        expect(Array.from(got)).toEqual(Array.from(want));
      } finally {
        ops.destroy();
      }
    });
  }
});
