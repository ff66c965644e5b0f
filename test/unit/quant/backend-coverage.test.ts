/**
 * The quant registry is complete on every backend: each `QuantType` has golden vectors, runs a matmul on the CPU
 * reference backend, has its declared WASM path in every kernel build (and the derived WASM tables agree with the
 * record), and has a WebGPU layout matching its `webgpu` facts. A type added to QUANT_TYPES without any of these fails
 * here, naming the type and what is missing. Matmul accuracy per type is checked in test/kernels/wasm-matmul.test.ts
 * (WASM vs CPU) and test/kernels/webgpu-quant.gpu.test.ts (GPU).
 */

import { existsSync, readFileSync } from 'node:fs';
import v8 from 'node:v8';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { FUSED_KERNELS, GEMV_NAMES } from '../../../src/backend/wasm/kernel-exports.js';
import { detectWasmFeatures, loadKernelModule, type WasmVariant } from '../../../src/backend/wasm/loader.js';
import { ROW_PAIR_TYPES } from '../../../src/backend/wasm/row-pairs.js';
import { canFuseGlu } from '../../../src/backend/webgpu/gemv-bcast.js';
import {
  GPU_QUANT_LAYOUTS,
  getGpuQuantLayout,
  HARDWARE_QUANT_LAYOUTS,
  SOFTWARE_QUANT_LAYOUTS,
} from '../../../src/backend/webgpu/upload.js';
import { GgmlType } from '../../../src/gguf/types.js';
import { QUANT_TYPES } from '../../../src/quant/index.js';
import { mulberry32 } from '../../helpers/mulberry32.js';
import { quantWeightBytes } from '../../helpers/quant-weight.js';
import { vectorPath } from './quant-vectors.js';

/** Registry `rows4.recode` → the kernels' recode argument (rows4-layout.ts). */
const RECODES = { q5_0: 1, q6_k: 2, q5_k: 3 } as const;

v8.setFlagsFromString('--experimental-wasm-relaxed-simd'); // this test process only, as wasm-matmul.test.ts
const features = detectWasmFeatures();
const VARIANTS: WasmVariant[] = ['scalar', 'simd128', ...(features.relaxedSimd ? ['relaxed-simd' as const] : [])];
const shaderPath = (name: string): string =>
  fileURLToPath(new URL(`../../../shaders/quant/${name}.wgsl`, import.meta.url));

describe('every registry type has golden vectors', () => {
  for (const t of QUANT_TYPES) {
    it(t.name, () => {
      expect(existsSync(vectorPath(t.name)), `${t.name}: no ${vectorPath(t.name)}`).toBe(true);
    });
  }
});

describe('every registry type runs on the CPU reference backend', () => {
  for (const t of QUANT_TYPES) {
    it(`${t.name}: one-row matmul equals the dot product of the dequantized row`, async () => {
      const k = Math.max(256, t.blockElements);
      const r = mulberry32(t.id + 1);
      const values = Float32Array.from({ length: k }, () => r() * 2 - 1);
      const bytes = quantWeightBytes(t, values, t.id + 1);
      const deq = new Float32Array(k);
      t.dequantizeRow(bytes, deq, k);
      const ops = createCpuOps();
      const w = await ops.uploadWeight({ name: 'w', type: t.id, shape: [k, 1] }, bytes);
      const ones = new Float32Array(k).fill(1);
      const table = await ops.uploadWeight(
        { name: 'x', type: GgmlType.F32, shape: [k, 1] },
        new Uint8Array(ones.buffer),
      );
      const x = ops.createActivation('x', 1, k);
      const out = ops.createActivation('out', 1, 1);
      ops.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
      ops.embed(x, table, 1);
      ops.matmul(out, x, w, 1);
      ops.endStep();
      const got = (await ops.read(out, 1))[0]!;
      const want = deq.reduce((a, b) => a + b, 0);
      expect(Math.abs(got - want)).toBeLessThanOrEqual(1e-4 * Math.max(1, Math.abs(want)));
      ops.destroy();
    });
  }
});

describe('every registry type has its WASM path', () => {
  it('each kernel build exports every declared kernel', async () => {
    for (const variant of VARIANTS) {
      const exported = new Set(WebAssembly.Module.exports(await loadKernelModule(variant, false)).map((e) => e.name));
      for (const t of QUANT_TYPES) {
        if (t.wasm === 'dequantize') continue;
        expect(exported.has(t.wasm.kernel), `${variant} build lacks ${t.wasm.kernel} (${t.name})`).toBe(true);
        expect(GEMV_NAMES as readonly string[], t.name).toContain(t.wasm.kernel);
      }
    }
  });

  it('the derived kernel and row-pair tables agree with the records', () => {
    for (const t of QUANT_TYPES) {
      const fused = FUSED_KERNELS.get(t.id);
      if (t.wasm === 'dequantize') {
        expect(fused, t.name).toBeUndefined();
        expect(ROW_PAIR_TYPES.has(t.id), t.name).toBe(false);
        continue;
      }
      expect(fused, t.name).toEqual({
        name: t.wasm.kernel,
        isQ8: t.wasm.activations === 'q8',
        blockElements: t.blockElements,
        rows4: t.wasm.rows4?.kernel ?? null,
        rows4Block: t.wasm.rows4
          ? {
              blockBytes: t.blockBytes,
              head: t.wasm.rows4.head,
              tail: t.wasm.rows4.tail,
              flip: t.wasm.rows4.signFlip ? 0x80 : 0,
              recode: t.wasm.rows4.recode ? RECODES[t.wasm.rows4.recode] : 0,
            }
          : null,
      });
      // A 4-row layout is stored only for blocks of f16 fields around whole 32-bit words (rows4-layout.ts).
      if (t.wasm.rows4) expect((t.blockBytes - 2 * (t.wasm.rows4.head + t.wasm.rows4.tail)) % 4, t.name).toBe(0);
      expect(ROW_PAIR_TYPES.get(t.id), t.name).toBe(t.wasm.rowPairs === true ? t.blockBytes : undefined);
    }
    expect([...ROW_PAIR_TYPES.keys()].map((id) => GgmlType[id])).toEqual(['Q4_0', 'Q5_0', 'Q8_0', 'MXFP4']);
  });
});

describe('every registry type has its WebGPU layout', () => {
  for (const t of QUANT_TYPES) {
    it(t.name, () => {
      const layout = GPU_QUANT_LAYOUTS.get(t.id);
      expect(layout, `${t.name}: no entry in GPU_QUANT_LAYOUTS`).toBeDefined();
      expect(t.webgpu, `${t.name}: no webgpu facts in its QuantType`).toBeDefined();
      const g = t.webgpu!;
      const l = layout!;
      expect([l.name, l.blockElements, l.blockBytes, l.headToTail, l.groupBlocks]).toEqual([
        g.snippet,
        t.blockElements,
        t.blockBytes,
        g.headToTail,
        g.groupBlocks,
      ]);
      // The software kernel set's layout: re-coded exactly where the record says softwareRecode; its fast dot32.
      const sw = getGpuQuantLayout(t.id, t.name, 'software');
      expect(SOFTWARE_QUANT_LAYOUTS.has(t.id), `${t.name} in SOFTWARE_QUANT_LAYOUTS`).toBe(
        g.softwareRecode !== undefined,
      );
      expect(sw.name, `${t.name} software layout`).toBe(g.softwareRecode ?? l.name);
      expect(sw.recode?.name, `${t.name} re-coding`).toBe(g.softwareRecode);
      if (sw.recode) expect(sw.recode.words % 4, `${t.name} re-coded block stays 16-byte aligned`).toBe(0);
      expect(existsSync(shaderPath(sw.name)), shaderPath(sw.name)).toBe(true);
      expect(canFuseGlu(sw), `${t.name} fastDot32`).toBe(g.fastDot32);
      expect(existsSync(shaderPath(g.snippet)), shaderPath(g.snippet)).toBe(true);
      for (const table of g.tables ?? []) {
        expect(existsSync(shaderPath(`tables/${table}`)), `${t.name} table ${table}`).toBe(true);
        expect(l.wgsl, `${t.name}: table ${table} precedes the snippet`).toContain(
          readFileSync(shaderPath(`tables/${table}`), 'utf8'),
        );
      }
      expect(existsSync(shaderPath(`${sw.name}_dot32`)), `${t.name} fast dot32 snippet`).toBe(g.fastDot32);
      if (sw.recode) expect(existsSync(shaderPath(`${g.snippet}_dot32`)), `${t.name} no plain dot32`).toBe(false);
      // The hardware kernel set's row-split form: exactly where a _rows snippet exists, and no other shape change.
      const rows = HARDWARE_QUANT_LAYOUTS.get(t.id);
      expect(existsSync(shaderPath(`${g.snippet}_rows`)), `${t.name} row-split snippet`).toBe(g.hardwareRows === true);
      expect(rows !== undefined, `${t.name} in HARDWARE_QUANT_LAYOUTS`).toBe(g.hardwareRows === true);
      if (rows)
        expect([rows.name, rows.rowSplit, rows.groupBlocks, rows.blockBytes]).toEqual([
          `${g.snippet}_rows`,
          true,
          0,
          t.blockBytes,
        ]);
      // gemv_sg's fast dot_chunk: defined by the hardware set's snippet exactly where the record says chunkDot.
      const hw = rows ?? l;
      const hwSnippet = readFileSync(shaderPath(hw.rowSplit ? `${g.snippet}_rows` : g.snippet), 'utf8');
      expect(/\bfn dot_chunk\(/.test(hwSnippet), `${t.name} dot_chunk in its hardware snippet`).toBe(
        g.chunkDot === true,
      );
      expect(hw.chunkDot, `${t.name} layout.chunkDot`).toBe(g.chunkDot === true);
    });
  }
});
