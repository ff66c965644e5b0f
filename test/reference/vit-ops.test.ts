/**
 * The vision encoder on the cpu reference and WASM backends vs llama.cpp mtmd (test/helpers/vit-ops-check.ts; WebGPU:
 * test/kernels/webgpu-vit-ops.gpu.test.ts).
 */

import v8 from 'node:v8';
import { describe, expect, it, vi } from 'vitest';
import { seedImage } from '../../scripts/synthetic/seed-image.mjs';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { GgmlType } from '../../src/gguf/types.js';
import { writeGguf } from '../../src/gguf/write.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { getQuantType } from '../../src/quant/index.js';
import { loadVisionEncoder } from '../../src/vision/vision-encoder.js';
import { maxAbsDiff } from '../helpers/compare.js';
import { expectLlmError } from '../helpers/llm-error.js';
import { describeProjectorOps, describeVitOps } from '../helpers/vit-ops-check.js';
import { projectorFixtures, projectorMmproj } from '../unit/vision/projector-fixtures.js';
import { fixtureMmproj, visionFixtures } from '../unit/vision/vision-fixtures.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describeVitOps('cpu', () => createCpuOps(), 1e-3);
describeVitOps('wasm', () => createWasmOps({ threads: 1 }), 1e-3);
describeProjectorOps('cpu', () => createCpuOps(), 1e-3);
describeProjectorOps('wasm', () => createWasmOps({ threads: 1 }), 1e-3);

describe('the vision encoder on a backend: bad input', () => {
  it('an mmproj for another text width is invalid-request naming both widths, and releases the backend', async () => {
    const fx = visionFixtures()[0]!;
    const { bytes } = await fixtureMmproj(fx);
    const ops = createCpuOps();
    const destroy = vi.spyOn(ops, 'destroy');
    const e = await expectLlmError(
      loadVisionEncoder(new MemoryByteSource(bytes), fx.shape.nEmbdText + 1, undefined, ops),
      'invalid-request',
    );
    expect(e.message).toContain(String(fx.shape.nEmbdText));
    expect(destroy).toHaveBeenCalled();
  });

  it('a Qwen2.5-VL file whose RMS norms have biases (none published) falls back to the TS reference and releases the backend', async () => {
    const fx = projectorFixtures().find((f) => f.projector === 'qwen2.5vl_merger')!;
    const source = new MemoryByteSource((await projectorMmproj(fx)).bytes);
    const gguf = await parseGguf(source);
    const tensors = await Promise.all(
      gguf.tensors.map(async (t) => ({
        name: t.name,
        type: t.type,
        shape: [...t.shape],
        data: await source.read(gguf.tensorDataOffset + t.offset, t.byteLength),
      })),
    );
    const d = fx.shape.nEmbd;
    const bias = new Float32Array(d).fill(0.05);
    tensors.push({ name: 'v.blk.0.ln1.bias', type: GgmlType.F32, shape: [d], data: new Uint8Array(bias.buffer) });
    const ops = createCpuOps();
    const destroy = vi.spyOn(ops, 'destroy');
    const file = writeGguf({ metadata: gguf.metadata, tensors });
    const vision = await loadVisionEncoder(new MemoryByteSource(file), fx.shape.nEmbdText, undefined, ops);
    expect(vision.backend).toBe('reference');
    expect(destroy).toHaveBeenCalled();
    expect((await vision.encode(seedImage(64, 64, 1))).nTokens).toBeGreaterThan(0);
  });

  it.each([
    ['pixtral', false, false, 'gelu-quick'],
    ['qwen2.5vl_merger', false, false, 'gelu-quick'],
    ['qwen2.5vl_merger', true, false, 'gelu'],
    ['gemma4v', false, false, 'gelu-quick'],
  ] as const)(
    'a gated FFN of %s (use_gelu %s, use_silu %s: %s) runs on the backend within 1e-3 of the TS oracle',
    async (projector, useGelu, useSilu, act) => {
      const fx = projectorFixtures().find((f) => f.projector === projector)!;
      const source = new MemoryByteSource((await projectorMmproj(fx)).bytes);
      const gguf = await parseGguf(source);
      const tensors = await Promise.all(
        gguf.tensors.map(async (t) => ({
          name: t.name,
          type: t.type,
          shape: [...t.shape],
          data: await source.read(gguf.tensorDataOffset + t.offset, t.byteLength),
        })),
      );
      const metadata = { ...gguf.metadata, 'clip.use_silu': useSilu, 'clip.use_gelu': useGelu };
      const file = writeGguf({ metadata, tensors });
      const vision = await loadVisionEncoder(new MemoryByteSource(file), fx.shape.nEmbdText, undefined, createCpuOps());
      expect([vision.config.ffn, vision.backend]).toEqual([act, 'cpu']);
      const reference = await loadVisionEncoder(new MemoryByteSource(file), fx.shape.nEmbdText);
      const image = seedImage(70, 50, 4);
      const [got, want] = [await vision.encode(image), await reference.encode(image)];
      const err =
        maxAbsDiff(got.embeddings, want.embeddings) / want.embeddings.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
      console.log(`[vit-ops] cpu ${projector} ${act} gated FFN: rel err ${err.toExponential(2)} vs the TS oracle`);
      expect(err).toBeLessThan(1e-3);
      vision.destroy();
    },
  );

  it('a quick-GELU ViT (clip.use_gelu false) runs on the backend within 1e-3 of the TS oracle', async () => {
    const fx = visionFixtures()[0]!;
    const source = new MemoryByteSource((await fixtureMmproj(fx)).bytes);
    const gguf = await parseGguf(source);
    const tensors = await Promise.all(
      gguf.tensors.map(async (t) => ({
        name: t.name,
        type: t.type,
        shape: [...t.shape],
        data: await source.read(gguf.tensorDataOffset + t.offset, t.byteLength),
      })),
    );
    const quick = writeGguf({ metadata: { ...gguf.metadata, 'clip.use_gelu': false }, tensors });
    const vision = await loadVisionEncoder(
      new MemoryByteSource(quick),
      fx.shape.nEmbdText,
      undefined,
      await createWasmOps({ threads: 1 }),
    );
    expect([vision.config.ffn, vision.backend]).toEqual(['gelu-quick', 'wasm']);
    const reference = await loadVisionEncoder(new MemoryByteSource(quick), fx.shape.nEmbdText);
    const image = seedImage(50, 40, 2);
    const [got, want] = [await vision.encode(image), await reference.encode(image)];
    let diff = 0;
    let scale = 0;
    want.embeddings.forEach((v, i) => {
      diff = Math.max(diff, Math.abs(got.embeddings[i]! - v));
      scale = Math.max(scale, Math.abs(v));
    });
    expect(diff / scale).toBeLessThan(1e-3);
    expect(diff).toBeGreaterThan(0); // the two differ somewhere: the backend really ran
    vision.destroy();
  });

  it('an abort between blocks stops the encode with aborted; the encoder then encodes the next image', async () => {
    const fx = visionFixtures()[0]!;
    const { bytes } = await fixtureMmproj(fx);
    const vision = await loadVisionEncoder(new MemoryByteSource(bytes), fx.shape.nEmbdText, undefined, createCpuOps());
    const controller = new AbortController();
    const image = seedImage(32, 32, 1);
    const pending = vision.encode(image, controller.signal);
    setTimeout(() => controller.abort(), 0);
    await expectLlmError(pending, 'aborted', /encoding the image/);
    expect(vision.encodedImages).toBe(0);
    const again = await vision.encode(image);
    expect(again.nTokens).toBe(fx.images[0]!.nTokens);
    vision.destroy();
  });
});

/** The fixture's mmproj with every matrix whose rows are a multiple of 32 long stored Q8_0 (as llama.cpp quantizes). */
async function q8Mmproj(bytes: Uint8Array): Promise<Uint8Array> {
  const source = new MemoryByteSource(bytes);
  const gguf = await parseGguf(source);
  const q8 = getQuantType(GgmlType.Q8_0);
  const tensors = await Promise.all(
    gguf.tensors.map(async (t) => {
      const data = await source.read(gguf.tensorDataOffset + t.offset, t.byteLength);
      if (t.shape.length < 2 || t.shape[0]! % 32 !== 0 || t.type !== GgmlType.F32) {
        return { name: t.name, type: t.type, shape: [...t.shape], data };
      }
      const out = new Uint8Array((t.nElements / 32) * q8.blockBytes);
      q8.quantizeRow!(new Float32Array(data.slice().buffer), out);
      return { name: t.name, type: GgmlType.Q8_0, shape: [...t.shape], data: out };
    }),
  );
  return writeGguf({ metadata: gguf.metadata, tensors });
}

describe('the vision encoder on a backend: Q8_0 matrices', () => {
  /**
   * [name, backend, the F32 mmproj, its text width, limit]: wasm rounds activations to Q8 as ggml-cpu does (the Qwen-VL
   * chain, its merger over 4d-wide rows, measures 1.0e-2 with or without the fused QKV); the cpu backend keeps f32
   * activations, so it holds qwen3vl's fused QKV, split by rows at load, to 1e-3 (measures 3.8e-4).
   */
  const cases = (): [string, 'wasm' | 'cpu', () => Promise<Uint8Array>, number, number][] => {
    const gemma3 = visionFixtures().find((f) => f.name === 'gemma3-s1')!;
    const qwen3vl = projectorFixtures().find((f) => f.name === 'qwen3vl-s1')!;
    const gemma3Bytes = async () => (await fixtureMmproj(gemma3)).bytes;
    const qwen3vlBytes = async () => (await projectorMmproj(qwen3vl)).bytes;
    return [
      ['gemma3-s1', 'wasm', gemma3Bytes, gemma3.shape.nEmbdText, 5e-3],
      ['qwen3vl-s1', 'wasm', qwen3vlBytes, qwen3vl.shape.nEmbdText, 2e-2],
      ['qwen3vl-s1', 'cpu', qwen3vlBytes, qwen3vl.shape.nEmbdText, 1e-3],
    ];
  };
  it.each(cases())(
    'a Q8_0 mmproj (%s) on %s within its limit of the TS oracle on the same file',
    async (name, backend, f32Mmproj, nEmbdText, limit) => {
      const bytes = await q8Mmproj(await f32Mmproj());
      const types = new Set((await parseGguf(new MemoryByteSource(bytes))).tensors.map((t) => t.type));
      expect(types.has(GgmlType.Q8_0)).toBe(true);
      const ops = backend === 'wasm' ? await createWasmOps({ threads: 1 }) : createCpuOps();
      const vision = await loadVisionEncoder(new MemoryByteSource(bytes), nEmbdText, undefined, ops);
      const reference = await loadVisionEncoder(new MemoryByteSource(bytes), nEmbdText);
      const image = seedImage(97, 131, 3);
      const got = await vision.encode(image);
      const want = await reference.encode(image);
      let diff = 0;
      let scale = 0;
      want.embeddings.forEach((v, i) => {
        diff = Math.max(diff, Math.abs(got.embeddings[i]! - v));
        scale = Math.max(scale, Math.abs(v));
      });
      expect(vision.backend).toBe(backend);
      console.log(
        `[vit-ops] ${backend} Q8_0 mmproj ${name}: rel err ${(diff / scale).toExponential(2)} vs the TS oracle`,
      );
      expect(diff / scale).toBeLessThan(limit);
      vision.destroy();
    },
  );
});
