/**
 * The Qwen-VL pass on a backend (`src/vision/vit-ops-qwen.ts`) beyond the conformance of test/helpers/vit-ops-check.ts:
 * the row layout (2×2-block order, blocks regrouped window by window, the runs attention sees as separate sequences),
 * the vision rope as a backend multi-stream rope (cpu ops) against the oracle's `visionRope`, and that the recorded qwen2.5vl image depends on
 * its windows (full attention on every block lands far from mtmd), so the conformance pins them; an abort between
 * blocks stops the encode.
 */

import { describe, expect, it } from 'vitest';
import { seedImage } from '../../../scripts/synthetic/seed-image.mjs';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { writeGguf } from '../../../src/gguf/write.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { visionRope } from '../../../src/vision/projector-qwen25vl.js';
import { loadVisionEncoder } from '../../../src/vision/vision-encoder.js';
import { qwenLayout, qwenRopePositions, qwenVisionRope } from '../../../src/vision/vit-ops-qwen.js';
import { maxAbsDiff } from '../../helpers/compare.js';
import { expectLlmError } from '../../helpers/llm-error.js';
import { mulberry32 } from '../../helpers/mulberry32.js';
import { projectorFixtures, projectorMmproj } from './projector-fixtures.js';
import { decodeF32 } from './vision-fixtures.js';

describe('vit-ops-qwen', () => {
  it('rows in 2×2-block order, blocks window by window: a 20 × 12 patch grid in 7-token windows is runs of 168 and 72', () => {
    const l = qwenLayout(20, 12, 7); // merged 10 × 6: windows 7 × 6 and 3 × 6
    expect(l.windows).toEqual([168, 72]);
    expect([...l.perm.subarray(0, 8)]).toEqual([0, 1, 20, 21, 2, 3, 22, 23]);
    expect(l.perm[168]).toBe(14); // the second window starts at merged column 7
    expect([l.ys[168], l.xs[168]]).toEqual([0, 14]);
    for (let src = 0; src < 60; src++) {
      const [by, bx] = [Math.floor(src / 10), src % 10];
      expect(l.perm[4 * l.idx[src]!]).toBe(2 * by * 20 + 2 * bx); // idx finds each merged token's rows
    }
    expect(qwenLayout(20, 12, 10).windows).toEqual([240]);
    expect([...qwenLayout(20, 12, 10).perm.subarray(0, 4)]).toEqual([0, 1, 20, 21]);
  });

  it("the vision rope as a multi-stream rope on a backend rotates as the oracle's visionRope, identity at (0, 0)", async () => {
    const [heads, hd, n] = [3, 16, 12];
    const rand = mulberry32(5);
    const x = Float32Array.from({ length: n * heads * hd }, () => rand() * 2 - 1);
    const ys = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 4) * 5); // rows 0 … 10 and columns 0 … 6
    const xs = Int32Array.from({ length: n }, (_, t) => (t * 3) % 7);
    const want = x.slice();
    visionRope(want, ys, xs, heads, hd);
    const ops = createCpuOps();
    const act = ops.createActivation('x', n, heads * hd); // [n, heads · hd]
    ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0, positions: qwenRopePositions(ys, xs) });
    ops.setRows(act, x, n);
    ops.rope(act, n, qwenVisionRope(hd));
    ops.endStep();
    const got = await ops.read(act, n);
    ops.destroy();
    expect(maxAbsDiff(got, want)).toBeLessThan(1e-5);
    expect(maxAbsDiff(got, x)).toBeGreaterThan(0.1);
    expect(maxAbsDiff(got.subarray(0, heads * hd), x.subarray(0, heads * hd))).toBe(0); // row 0 at (0, 0)
  });

  it('the recorded qwen2.5vl image with full attention on every block lands far from mtmd (the windows matter)', async () => {
    const fx = projectorFixtures().find((f) => f.name === 'qwen25vl-s1')!;
    const { bytes } = await projectorMmproj(fx);
    const source = new MemoryByteSource(bytes);
    const gguf = await parseGguf(source);
    const tensors = await Promise.all(
      gguf.tensors.map(async (t) => ({
        name: t.name,
        type: t.type,
        shape: [...t.shape],
        data: await source.read(gguf.tensorDataOffset + t.offset, t.byteLength),
      })),
    );
    const im = fx.images[0]!; // 160 × 96: two windows
    const relErr = async (file: Uint8Array) => {
      const vision = await loadVisionEncoder(new MemoryByteSource(file), fx.shape.nEmbdText, undefined, createCpuOps());
      expect(vision.backend).toBe('cpu');
      const got = await vision.encode(seedImage(im.width, im.height, im.seed));
      vision.destroy();
      const ref = im.chunks[0]!;
      const d = ref.nEmbd;
      const picked = Float32Array.from(ref.rows!.flatMap((k) => [...got.embeddings.subarray(k * d, (k + 1) * d)]));
      const want = decodeF32(ref.embeddings);
      return maxAbsDiff(picked, want) / want.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    };
    const full = writeGguf({ metadata: { ...gguf.metadata, 'clip.vision.n_wa_pattern': 1 }, tensors });
    expect(await relErr(bytes)).toBeLessThan(1e-3);
    expect(await relErr(full)).toBeGreaterThan(1e-2);
  });

  it('an abort between blocks stops a Qwen-VL encode with aborted; the encoder then encodes the next image', async () => {
    const fx = projectorFixtures().find((f) => f.name === 'qwen3vl-s1')!;
    const { bytes } = await projectorMmproj(fx);
    const vision = await loadVisionEncoder(new MemoryByteSource(bytes), fx.shape.nEmbdText, undefined, createCpuOps());
    const controller = new AbortController();
    const image = seedImage(48, 48, 41);
    const pending = vision.encode(image, controller.signal);
    setTimeout(() => controller.abort(), 0);
    await expectLlmError(pending, 'aborted', /encoding the image/);
    expect(vision.encodedImages).toBe(0);
    expect((await vision.encode(image)).parts.some((p) => p.type === 'rows')).toBe(true);
    vision.destroy();
  });
});
