/**
 * A multi-sequence step after an image on an M-RoPE model (qwen2vl, `Transformer.evalRows`), shared by the
 * backends' tests: slot 0 holds text, a 3 × 2 image and text; slot 1 a copy of it plus one more token; slot 2 text
 * only. One step of a token per slot — rows 0 and 1 after the image at different positions (their rope positions 3
 * behind the KV index: 7 and 8, so a row reading the other's streams shows), row 2 at its KV position — against each
 * token evaluated alone (`eval`, which places it by the slot's images).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { maxAbsDiff } from './compare.js';
import { RECORDED_FIXTURE_DIR } from './shared-path.js';

/** Called just before a step and again after it ran and its first row's logits were read. */
type AroundStep = (step: 'image' | 'text', phase: 'before' | 'after') => void;

/**
 * max |Δlogit| of each row of the step vs the same token evaluated alone. `aroundStep` brackets the step and then
 * the same step over text-only slots (every slot a copy of slot 2), so WebGPU tests can compare their submissions.
 */
export async function mropeRowsDiffs(ops: Ops, aroundStep?: AroundStep): Promise<number[]> {
  const bytes = readFileSync(join(RECORDED_FIXTURE_DIR, 'qwen2vl-q8_0-s1.gguf'));
  const source = new MemoryByteSource(bytes, 'qwen2vl');
  const model = await loadTransformer(await parseGguf(source), source, ops, {
    contextLength: 64,
    ubatchSize: 8,
    nSlots: 3,
  });
  try {
    const d = model.config.embeddingLength;
    const rows = Float32Array.from({ length: 6 * d }, (_, i) => Math.cos(i) * 0.1); // [6, nEmbd]: a 3 × 2 image
    await model.eval(Int32Array.of(1, 5), 0, 0, { logits: 'none' });
    await model.evalEmbeddings!(rows, 2, 0, { logits: 'none', grid: { nx: 3, ny: 2 } });
    await model.eval(Int32Array.of(7, 8), 8, 0, { logits: 'none' });
    model.copySlot(0, 1, 10);
    await model.eval(Int32Array.of(10), 10, 1, { logits: 'none' });
    await model.eval(Int32Array.of(1, 5, 9, 2, 3, 4, 6, 7, 8, 9), 0, 2, { logits: 'none' });
    const step = [
      { slot: 0, pos: 10, token: 11 },
      { slot: 1, pos: 11, token: 12 },
      { slot: 2, pos: 10, token: 13 },
    ];
    aroundStep?.('image', 'before');
    await model.evalRows(step);
    const together: Float32Array[] = [await model.readLogits(0)];
    aroundStep?.('image', 'after');
    for (let r = 1; r < step.length; r++) together.push(await model.readLogits(r));
    const diffs: number[] = [];
    for (const [r, s] of step.entries()) {
      await model.eval(Int32Array.of(s.token), s.pos, s.slot, { logits: 'last' }); // rewrites the same position
      diffs.push(maxAbsDiff(together[r]!, await model.readLogits()));
    }
    if (aroundStep) {
      model.copySlot(2, 0, 11);
      model.copySlot(2, 1, 11);
      aroundStep('text', 'before');
      await model.evalRows(step.map((s) => ({ ...s, pos: 11 })));
      await model.readLogits(0);
      aroundStep('text', 'after');
    }
    return diffs;
  } finally {
    model.destroy();
  }
}
