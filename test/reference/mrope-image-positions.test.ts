/**
 * Where a multi-stream rope model (qwen2vl) runs an image and the text after it (mtmd's M-RoPE layout): the image's
 * rows at (p₀, p₀ + row, p₀ + col, 0) in raster order, over several steps when the image exceeds the ubatch; text
 * after it at its KV index minus what the image did not advance (n − max(nx, ny)); a slot copy keeps that, a rewrite
 * from before the image forgets it; text before any image runs at its KV positions (no streams sent). The step
 * batches the backend sees are recorded through a wrapper of the reference backend. A multi-sequence step after an
 * image (n choices) equals its rows run one by one on the reference and WASM (test/helpers/mrope-rows-check.ts).
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import type { Ops, StepBatch } from '../../src/backend/ops.js';
import { imageRopePositions, textRopePositions } from '../../src/backend/rope-multi.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { RopeStreams } from '../../src/model/rope-streams.js';
import { isLlmError } from '../../src/errors.js';
import { mropeRowsDiffs } from '../helpers/mrope-rows-check.js';
import { RECORDED_FIXTURE_DIR } from '../helpers/shared-path.js';

/** The reference backend, recording every beginStep's batch. */
function recordingOps(batches: StepBatch[]): Ops {
  const ops = createCpuOps();
  const begin = ops.beginStep.bind(ops);
  ops.beginStep = (b: StepBatch) => {
    batches.push(b);
    begin(b);
  };
  return ops;
}

describe('M-RoPE image positions (qwen2vl)', () => {
  it('image rows at grid positions, text after them shifted, copies and rewrites', async () => {
    const bytes = readFileSync(join(RECORDED_FIXTURE_DIR, 'qwen2vl-q8_0-s1.gguf'));
    const source = new MemoryByteSource(bytes, 'qwen2vl');
    const batches: StepBatch[] = [];
    const model = await loadTransformer(await parseGguf(source), source, recordingOps(batches), {
      contextLength: 64,
      ubatchSize: 4,
      nSlots: 2,
    });
    const d = model.config.embeddingLength;
    const rows = Float32Array.from({ length: 6 * d }, (_, i) => Math.sin(i) * 0.1); // [6, nEmbd]: a 3 × 2 image

    await model.eval(Int32Array.of(1, 5, 9), 0, 0, { logits: 'none' });
    expect(batches.at(-1)!.positions).toBeUndefined(); // text before any image: KV positions
    batches.length = 0;
    await model.evalEmbeddings!(rows, 3, 0, { logits: 'none', grid: { nx: 3, ny: 2 } });
    const want = imageRopePositions(3, 3, 2); // [4, 6]
    expect(batches.map((b) => b.tokens.length)).toEqual([4, 2]); // two steps of the ubatch
    const got = [0, 1, 2, 3].flatMap((s) =>
      batches.flatMap((b) => {
        const n = b.tokens.length;
        return Array.from(b.positions!.subarray(s * n, (s + 1) * n));
      }),
    );
    expect(got).toEqual(Array.from(want));

    batches.length = 0;
    await model.eval(Int32Array.of(7, 8), 9, 0, { logits: 'last' }); // KV 9, 10: rope 9 − (6 − 3) = 6, 7
    expect(Array.from(batches[0]!.positions!)).toEqual(Array.from(textRopePositions(6, 2)));

    model.copySlot(0, 1, 11);
    batches.length = 0;
    await model.eval(Int32Array.of(4), 11, 1, { logits: 'last' });
    expect(Array.from(batches[0]!.positions!)).toEqual(Array.from(textRopePositions(8, 1)));

    batches.length = 0;
    await model.eval(Int32Array.of(4, 4), 2, 1, { logits: 'last' }); // rewrites slot 1 from before the image
    expect(batches[0]!.positions).toBeUndefined();
    model.destroy();
  });

  it('a multi-sequence step after an image: each row at its own rope position, logits as one by one', async () => {
    for (const ops of [createCpuOps(), await createWasmOps({ threads: 1 })]) {
      const diffs = await mropeRowsDiffs(ops);
      diffs.forEach((d, r) => expect(d, `${ops.name} row ${r}`).toBeLessThan(1e-4));
    }
  });

  it('a grid that does not hold the rows is invalid-request', async () => {
    const bytes = readFileSync(join(RECORDED_FIXTURE_DIR, 'qwen2vl-q8_0-s1.gguf'));
    const source = new MemoryByteSource(bytes, 'qwen2vl');
    const model = await loadTransformer(await parseGguf(source), source, createCpuOps(), { contextLength: 32 });
    const rows = new Float32Array(4 * model.config.embeddingLength);
    const err = await model.evalEmbeddings!(rows, 0, 0, { grid: { nx: 3, ny: 2 } }).catch((e: unknown) => e);
    expect(isLlmError(err) && err.code === 'invalid-request').toBe(true);
    model.destroy();
  });

  it('RopeStreams: positions of several images, and the rows of a multi-sequence step', () => {
    const s = new RopeStreams();
    s.addImage(0, 2, 12, { nx: 4, ny: 3 }); // advances 4
    s.addImage(0, 15, 4, { nx: 2, ny: 2 }); // advances 2
    expect(s.ropePosition(0, 2)).toBe(2);
    expect(s.ropePosition(0, 14)).toBe(6);
    expect(s.ropePosition(0, 19)).toBe(9);
    expect(s.ropePosition(1, 19)).toBe(19);
    s.addImage(0, 3, 4, undefined); // rows without a grid: text-like
    expect(s.ropePosition(0, 19)).toBe(9);
    const [after, plain] = s.rowPositions([
      { slot: 0, pos: 20, token: 1 },
      { slot: 1, pos: 20, token: 1 },
    ]);
    expect(Array.from(after!)).toEqual(Array.from(textRopePositions(10, 1))); // each row at its own slot's position
    expect(plain).toBeUndefined(); // no image in slot 1: its KV position
    expect(s.spans(0, 18)).toEqual([[2, 12, 4]]); // the second image does not end inside 18 positions
    const restored = new RopeStreams();
    restored.place(1, s.spans(0, 19)); // a persisted prefix's images placed in another slot
    const tokens = [1, 2, ...Array<number>(12).fill(-5), 7, -1, -2, -3, -4]; // [19]: two images' placeholders
    expect(s.fits(s.spans(0, 19), tokens)).toBe(true);
    for (const bad of [
      null,
      [[2, 12]],
      [[2, 12, 13]],
      [[2, 12, 0]],
      [[1, 12, 4]],
      [
        [15, 4, 2],
        [2, 12, 4],
      ],
      [[15, 5, 2]],
    ])
      expect(s.fits(bad, tokens), JSON.stringify(bad)).toBe(false);
    expect(restored.ropePosition(1, 19)).toBe(9);
    s.truncate(0, 14);
    expect(s.ropePosition(0, 19)).toBe(11);
  });
});
