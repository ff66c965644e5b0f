/**
 * The WASM backend's recurrent state after its memory grows. The state arrays are views into the WASM memory, and a
 * non-shared memory's grow detaches every view of the old buffer. Hybrid models give attention layers an empty state
 * (size 0): those views once stayed on the first buffer, so reading, copying or writing a slot after a later grow
 * (e.g. the batched activations of `n` choices) threw "detached ArrayBuffer". Checked on the ops (a large activation
 * placed after the state), on qwen35's layers (a snapshot and a slot copy after a grow) and through the engine
 * (qwen35 and lfm2 with n = 4 choices, greedy: all equal to n = 1). And a grow inside a DeltaNet op (the first f32
 * copy of an F16 small weight) must not leave the op holding a detached state view (its byteOffset reads 0).
 */

import { join } from 'node:path';
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import type { DeltaNetDims } from '../../../src/backend/delta-net-types.js';
import { deltaNetStateSize } from '../../../src/backend/delta-net.js';
import type { Activation, Ops, Weight } from '../../../src/backend/ops.js';
import { createWasmOps } from '../../../src/backend/wasm/index.js';
import type { WasmHeap } from '../../../src/backend/wasm/wasm-heap.js';
import { GgmlType } from '../../../src/gguf/types.js';
import { maxAbsDiff } from '../../../src/model/conformance.js';
import { f32ToF16Bits } from '../../../src/quant/half.js';
import { mulberry32 } from '../../helpers/mulberry32.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { loadTransformer } from '../../../src/model/load.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describe('WASM recurrent state after the memory grows', () => {
  it('slots with empty (attention) layers read, copy and write after a grow', async () => {
    const ops = await createWasmOps({ threads: 1 });
    try {
      const layerSizes = [0, 24, 0, 8, 0]; // [nLayers] values per slot: attention layers hold none
      ops.createRecurrentState({ nSlots: 3, layerSizes });
      const total = layerSizes.reduce((s, n) => s + n, 0);
      const pattern = Float32Array.from({ length: total }, (_, i) => i + 0.5); // [Σ layerSizes]
      ops.writeRecurrentState(0, pattern);
      // 96 MiB placed after the state: the memory (a few MiB so far) must grow, detaching its old buffer.
      ops.createActivation('after the state', 1024, 24 * 1024);
      ops.copyRecurrentState(0, 1);
      expect(Array.from(await ops.readRecurrentState(1))).toEqual(Array.from(pattern));
      const negated = pattern.map((v) => -v);
      ops.writeRecurrentState(2, negated);
      expect(Array.from(await ops.readRecurrentState(2))).toEqual(Array.from(negated));
      expect(Array.from(await ops.readRecurrentState(0))).toEqual(Array.from(pattern));
    } finally {
      ops.destroy();
    }
  });

  it('qwen35: a snapshot and a slot copy after a grow carry the state', async () => {
    const ops = await createWasmOps({ threads: 1 });
    const source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, 'qwen35-q8_0-s1.gguf'));
    const model = await loadTransformer(await parseGguf(source), source, ops, { contextLength: 32, nSlots: 2 });
    try {
      const tokens = Int32Array.from({ length: 9 }, (_, i) => 5 + ((i * 37) % 400)); // [9]
      await model.eval(tokens, 0, 0, { logits: 'none' });
      ops.createActivation('after the state', 1024, 24 * 1024); // [1024, 24576]: 96 MiB, the memory grows
      const snap = (await model.readState(0))!;
      model.copySlot(0, 1, tokens.length);
      expect(Array.from((await model.readState(1))!)).toEqual(Array.from(snap));
      const next = Int32Array.of(17);
      const a = (await model.eval(next, tokens.length, 0, { logits: 'all' }))!;
      const b = (await model.eval(next, tokens.length, 1, { logits: 'all' }))!;
      expect(Array.from(b)).toEqual(Array.from(a));
    } finally {
      model.destroy();
      await source.close();
    }
  });

  for (const fixture of ['qwen35-q8_0-s1', 'lfm2-q8_0-s1']) {
    it(`${fixture}: n = 4 greedy choices on WASM equal the one-choice answer`, async () => {
      const engine = await createEngine({
        model: join(RECORDED_FIXTURE_DIR, `${fixture}.gguf`),
        backend: 'wasm',
        threads: 1,
        contextLength: 64,
        slots: 4,
      });
      try {
        const ask = { prompt: 'The data:', temperature: 0, max_tokens: 6 };
        const one = await engine.completions.create({ ...ask, n: 1 });
        const four = await engine.completions.create({ ...ask, n: 4 });
        expect(four.choices.map((c) => c.text)).toEqual(Array(4).fill(one.choices[0].text));
        // A second request reads the prompt's snapshot back from the cache.
        const again = await engine.completions.create({ ...ask, n: 4 });
        expect(again.choices.map((c) => c.text)).toEqual(Array(4).fill(one.choices[0].text));
      } finally {
        await engine.unload();
      }
    });
  }
});

const DN: DeltaNetDims = { convWidth: 4, headK: 16, nKHeads: 2, headV: 8, nVHeads: 4 };
const N = 5; // tokens of the step

function random(seed: number, count: number, scale: number, offset = 0): Float32Array {
  const next = mulberry32(seed);
  return Float32Array.from({ length: count }, () => offset + scale * (2 * next() - 1));
}

/** out [N, nVHeads·headV] and the state after one DeltaNet step; `fill` runs just before it (on WASM: fills the memory). */
async function deltaNetStep(ops: Ops, fill: () => void): Promise<[Float32Array, Float32Array]> {
  const d = DN;
  const channels = 2 * d.nKHeads * d.headK + d.nVHeads * d.headV;
  const vCols = d.nVHeads * d.headV;
  const f16 = (name: string, values: Float32Array, shape: number[]): Promise<Weight> =>
    ops.uploadWeight(
      { name, type: GgmlType.F16, shape },
      new Uint8Array(Uint16Array.from(values, f32ToF16Bits).buffer),
    );
  // F16 small weights: the WASM backend makes their f32 copies on first use, inside the op.
  const w = {
    dims: d,
    conv: await f16('conv', random(1, channels * d.convWidth, 0.5), [d.convWidth, channels]),
    dtBias: await f16('dt_bias', random(2, d.nVHeads, 0.5), [d.nVHeads]),
    a: await f16('a', random(3, d.nVHeads, 0.5, -1), [d.nVHeads]),
    norm: await f16('norm', random(4, d.headV, 0.2, 1), [d.headV]),
  };
  ops.createRecurrentState({ nSlots: 1, layerSizes: [0, deltaNetStateSize(d)] });
  const input = (label: string, cols: number, seed: number, scale: number): Activation => {
    const a = ops.createActivation(label, N, cols);
    ops.setRows(a, random(seed, N * cols, scale), N);
    return a;
  };
  const inputs = {
    mixed: input('mixed', channels, 5, 2),
    z: input('z', vCols, 6, 1),
    beta: input('beta', d.nVHeads, 7, 2),
    alpha: input('alpha', d.nVHeads, 8, 2),
    conv: ops.createActivation('conv', N, channels),
  };
  const out = ops.createActivation('out', N, vCols);
  fill();
  ops.beginStep({ tokens: new Int32Array(N), startPos: 0, slot: 0 });
  ops.deltaNet(out, inputs, 1, N, w, 1e-6);
  ops.endStep();
  return [await ops.read(out, N), await ops.readRecurrentState(0)];
}

describe('WASM DeltaNet when a weight copy inside the op grows the memory', () => {
  it('updates the state where it lives and matches the CPU reference', async () => {
    const cpu = createCpuOps();
    const [refOut, refState] = await deltaNetStep(cpu, () => {});
    cpu.destroy();
    const ops = await createWasmOps({ threads: 1 });
    try {
      const heap = (ops as unknown as { heap: WasmHeap }).heap;
      let filled = 0;
      const [out, state] = await deltaNetStep(ops, () => {
        // Everything up to the memory's end placed: the first f32 copy of an F16 weight must grow it.
        const at = Math.ceil(heap.usedBytes / 64) * 64;
        heap.alloc(heap.u8.byteLength - at, 'filler');
        filled = heap.u8.byteLength;
      });
      expect(heap.u8.byteLength).toBeGreaterThan(filled); // the op grew the memory
      expect(maxAbsDiff(out, refOut)).toBeLessThan(1e-4);
      expect(maxAbsDiff(state, refState)).toBeLessThan(1e-4);
      expect(maxAbsDiff(state, new Float32Array(state.length))).toBeGreaterThan(1e-3); // the step wrote it
    } finally {
      ops.destroy();
    }
  });
});
