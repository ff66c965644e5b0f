/**
 * Context shift (issue #20) against llama.cpp doing the same shift: `fixtures/kv/*.shift-*.json` hold the logits
 * llama.cpp gives for `next` after evaluating `tokens` and erasing positions [n_keep, n_keep + n_discard)
 * (llama_memory_seq_rm + llama_memory_seq_add, its K-shift re-rotating the moved keys; made by
 * scripts/oracle/make-shift-reference.mjs). llama3 (norm RoPE with llama3 frequency factors) with an F32 cache, qwen3
 * (neox RoPE, head 64) with a Q8_0 cache (dequantize, un-rotate Hadamard, RoPE, requantize) and with an F16 one
 * (`--kv-type f16`: WASM's default for decoders). The same tokens without
 * a shift give logits several units away, so a shift that moved without re-rotating, or did nothing, fails.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { KvType } from '../../src/backend/kv-type.js';
import type { Ops } from '../../src/backend/ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { llmError } from '../helpers/llm-error.js';
import { sharedPath } from '../helpers/shared-path.js';

interface ShiftReference {
  readonly kv_type: KvType;
  readonly tokens: number[];
  readonly n_keep: number;
  readonly n_discard: number;
  readonly next: number;
  readonly logits_after_shift: number[];
}

/** Fixture, model and the largest |ours − llama.cpp| allowed (the float paths differ by ~0.005, see kv-quant). */
const CASES = [
  { fixture: 'llama3-f16.shift-f32.json', model: 'llama3-f16.gguf', tolerance: 0.02 },
  { fixture: 'qwen3-f16.shift-q8_0.json', model: 'qwen3-f16.gguf', tolerance: 0.1 },
  // f16: WASM's default KV type for decoders (src/api/default-kv-type.ts), with chat's default context shift.
  { fixture: 'qwen3-f16.shift-f16.json', model: 'qwen3-f16.gguf', tolerance: 0.02 }, // measured 0.0075
].map((c) => ({
  ...c,
  ref: JSON.parse(readFileSync(new URL(`../fixtures/kv/${c.fixture}`, import.meta.url), 'utf8')) as ShiftReference,
}));

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < b.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** Our logits of `next` after the tokens, with the shift first (or without it). */
async function logitsOf(ops: Ops, c: (typeof CASES)[number], shift: boolean): Promise<Float32Array> {
  const { ref } = c;
  const source = await NodeFileSource.open(sharedPath('models', 'arch', c.model));
  try {
    const model = await loadTransformer(await parseGguf(source), source, ops, {
      contextLength: 32,
      ubatchSize: 4,
      kvType: ref.kv_type,
    });
    const n = ref.tokens.length;
    await model.eval(Int32Array.from(ref.tokens), 0, 0, { logits: 'none' });
    if (shift) await model.shiftContext(0, ref.n_keep, ref.n_discard, n);
    await model.eval(Int32Array.from([ref.next]), shift ? n - ref.n_discard : n, 0);
    const logits = await model.readLogits();
    model.destroy();
    return logits;
  } finally {
    await source.close();
  }
}

for (const [name, make] of [
  ['cpu', () => Promise.resolve(createCpuOps())],
  ['wasm', () => createWasmOps({ threads: 1 })],
] as const) {
  describe(`${name}: context shift vs llama.cpp's seq_rm + seq_add`, () => {
    it.each(CASES)('$model, $ref.kv_type KV: the logits after the shift match llama.cpp', async (c) => {
      const shifted = await logitsOf(await make(), c, true);
      const ours = maxDiff(shifted, c.ref.logits_after_shift);
      expect(ours).toBeLessThan(c.tolerance);
      const unshifted = await logitsOf(await make(), c, false);
      expect(maxDiff(unshifted, c.ref.logits_after_shift)).toBeGreaterThan(10 * c.tolerance);
    });

    it('refuses a shift that does not fit the filled positions', async () => {
      const ops = await make();
      ops.createKvCache({ nSlots: 1, contextLength: 8, layers: [{ nKvHeads: 1, headDim: 32 }] });
      const e = await llmError(ops.shiftKv(0, { nKeep: 4, nDiscard: 4, nPositions: 6, ropes: [null] }));
      expect(e.code).toBe('invalid-request');
      ops.destroy();
    });
  });
}
