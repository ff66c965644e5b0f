/**
 * The f16 KV cache's conversions in WASM (wasm/assembly/kv-f16-rows.ts: the stored K/V rows and q rounded to f16) are
 * bit for bit src/quant/half.ts's (the JavaScript path they replace, which the cpu backend still runs): random values
 * over the whole f16 range, ties at every exponent, subnormals and the values that round into or out of them, the
 * largest f16 and the first values that overflow, ±0, ±inf and NaN — on every build. Plus the row layout
 * (source and destination strides) of f16_store_rows, and that the WASM cache uses them instead of kv-type.ts's.
 */

import { describe, expect, it, vi } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import * as kvType from '../../src/backend/kv-type.js';
import { createWasmOps, type WasmVariant } from '../../src/backend/wasm/index.js';
import type { KernelExports } from '../../src/backend/wasm/kernel-exports.js';
import { loadKernelModule } from '../../src/backend/wasm/loader.js';
import { f32ToF16Bits, roundToF16 } from '../../src/quant/half.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';
import { mulberry32 } from '../helpers/mulberry32.js';
import { setActivation } from '../helpers/set-activation.js';

vi.mock('../../src/backend/kv-type.js', async (original) => {
  const actual = await original<typeof import('../../src/backend/kv-type.js')>();
  return { ...actual, encodeKvRow: vi.fn(actual.encodeKvRow), roundQueryForKv: vi.fn(actual.roundQueryForKv) };
});

/** The values to convert (f32-representable). */
function values(): Float32Array {
  const next = mulberry32(7);
  const out: number[] = [0, -0, Infinity, -Infinity, Number.NaN, 65504, -65504, 65519.99, 65520, 1e6, -1e-9];
  for (let e = -26; e <= 16; e++) {
    const p = 2 ** e;
    // A tie between two f16 neighbours at this scale, and one f32 step either side of it.
    for (const m of [1, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 1.5 + 2 ** -11]) {
      const t = Math.fround(m * p);
      const u = new Uint32Array(Float32Array.of(t).buffer)[0]!;
      const f = new Float32Array(new Uint32Array([u - 1, u, u + 1]).buffer);
      out.push(...f, ...f.map((x) => -x));
    }
  }
  for (let i = 0; i < 4000; i++) out.push((next() - 0.5) * 2 ** Math.floor(next() * 44 - 28));
  return Float32Array.from(out);
}

for (const variant of ['scalar', 'simd128', 'relaxed-simd'] as WasmVariant[]) {
  describe(`f16 KV conversions in WASM (${variant})`, () => {
    it('equal half.ts bit for bit, rows at their strides', async () => {
      const memory = new WebAssembly.Memory({ initial: 4 });
      const k = new WebAssembly.Instance(await loadKernelModule(variant, false), { env: { memory } })
        .exports as unknown as KernelExports;
      const x = values();
      const f32 = new Float32Array(memory.buffer);
      f32.set(x, 0);
      const roundedAt = 64 * 1024;
      k.f16_round(0, roundedAt, x.length);
      const rounded = new Float32Array(memory.buffer, roundedAt, x.length);
      for (let i = 0; i < x.length; i++) {
        if (!Object.is(rounded[i], Math.fround(roundToF16(x[i]!))) && !(Number.isNaN(x[i]) && Number.isNaN(rounded[i])))
          expect.fail(`round ${x[i]}: ${rounded[i]} vs ${roundToF16(x[i]!)}`);
      }
      // f16_store_rows: rows of 100 values taken 128 apart, stored 112 apart.
      const cols = 100;
      const rows = Math.floor(x.length / 128);
      const outAt = 160 * 1024;
      k.f16_store_rows(0, 0, outAt, cols, 0, rows, 128, 112);
      const halves = new Uint16Array(memory.buffer, outAt, rows * 112);
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const want = f32ToF16Bits(x[r * 128 + c]!);
          if (halves[r * 112 + c] !== want)
            expect.fail(`row ${r} [${c}] ${x[r * 128 + c]}: ${halves[r * 112 + c]} vs ${want}`);
        }
        for (let c = cols; c < 112; c++) expect(halves[r * 112 + c]).toBe(0); // the gap between rows untouched
      }
    });
  });
}

describe('wasm f16 KV cache', () => {
  it('stores rows and rounds q in WASM (not through kv-type.ts), matching the reference backend', async () => {
    const outputs: Float32Array[] = [];
    for (const ops of [await createWasmOps({ threads: 1 }), createCpuOps()]) {
      vi.mocked(kvType.encodeKvRow).mockClear();
      vi.mocked(kvType.roundQueryForKv).mockClear();
      ops.createKvCache({ nSlots: 1, contextLength: 8, layers: uniformKvLayers(1, 1, 32), kvType: 'f16' });
      const next = mulberry32(3);
      const rows = (n: number, cols: number) => Float32Array.from({ length: n * cols }, () => next() - 0.5);
      const k = await setActivation(ops, rows(3, 32), 3, 32);
      const v = await setActivation(ops, rows(3, 32), 3, 32);
      const q = await setActivation(ops, rows(3, 64), 3, 64);
      const o = ops.createActivation('o', 3, 64);
      ops.beginStep({ tokens: new Int32Array(3), startPos: 0, slot: 0 });
      ops.storeKv(0, k, v, 3);
      ops.attention(o, q, 0, 3, { nHeads: 2, nKvHeads: 1, headDim: 32, scale: 0.2, slidingWindow: 0, softcap: 0 });
      ops.endStep();
      outputs.push(await ops.read(o, 3));
      if (ops.name === 'wasm') {
        expect(kvType.encodeKvRow).not.toHaveBeenCalled();
        expect(kvType.roundQueryForKv).not.toHaveBeenCalled();
      }
      ops.destroy();
    }
    for (let i = 0; i < outputs[1]!.length; i++) expect(Math.abs(outputs[0]![i]! - outputs[1]![i]!)).toBeLessThan(2e-4);
  });
});
