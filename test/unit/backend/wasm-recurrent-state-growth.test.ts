/**
 * The WASM backend's recurrent state after its memory grows. The state arrays are views into the WASM memory, and a
 * non-shared memory's grow detaches every view of the old buffer. Hybrid models give attention layers an empty state
 * (size 0): those views once stayed on the first buffer, so reading, copying or writing a slot after a later grow
 * (e.g. the batched activations of `n` choices) threw "detached ArrayBuffer". Checked on the ops (a large activation
 * placed after the state), on qwen35's layers (a snapshot and a slot copy after a grow) and through the engine (qwen35 and lfm2 with n = 4 choices, greedy: all equal to n = 1).
 */

import { join } from 'node:path';
import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { createWasmOps } from '../../../src/backend/wasm/index.js';
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
