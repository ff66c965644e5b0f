/**
 * The fixture tool's model generator: for every architecture, an F16 model with the arch fixture's own shape has
 * exactly the fixture's tensor table (names, shapes, types) and metadata (but its name), parses with the project's
 * parser and dequantizes to finite values; quantized variants apply llama.cpp's row-size fallbacks.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isLlmError } from '../../../src/errors.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { GgmlType, type GgufFile } from '../../../src/gguf/types.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { dequantize } from '../../../src/quant/index.js';
import { SYNTHETIC_ARCHES, TEMPLATE_FILE } from '../../../scripts/synthetic/arch-plan.js';
import { parseShape } from '../../../scripts/fixtures.js';
import { parseQuant, SHARED_MODELS, writeSyntheticModel } from '../../../scripts/synthetic-model.js';

const dir = mkdtempSync(path.join(tmpdir(), 'webgguf-synth-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function load(file: string): Promise<{ gguf: GgufFile; bytes: Uint8Array }> {
  const bytes = new Uint8Array(readFileSync(file));
  return { gguf: await parseGguf(new MemoryByteSource(bytes, file)), bytes };
}

const plain = (v: unknown): unknown =>
  JSON.parse(JSON.stringify(v, (_, x: unknown) => (typeof x === 'bigint' ? Number(x) : x)));

describe('synthetic models match the arch fixtures layout', () => {
  for (const arch of SYNTHETIC_ARCHES) {
    it(`${arch}: F16 model has the fixture's tensors and metadata`, async () => {
      const out = path.join(dir, `${arch}-f16.gguf`);
      await writeSyntheticModel({ arch, quant: GgmlType.F16, out });
      const mine = await load(out);
      const ref = await load(path.join(SHARED_MODELS, 'arch', TEMPLATE_FILE[arch]));
      const table = (g: GgufFile): string[] =>
        g.tensors.map((t) => `${t.name} [${t.shape.join(',')}] ${t.type}`).sort();
      expect(table(mine.gguf)).toEqual(table(ref.gguf));
      for (const key of Object.keys(ref.gguf.metadata)) {
        if (key === 'general.name') continue;
        expect(plain(mine.gguf.metadata[key]), key).toEqual(plain(ref.gguf.metadata[key]));
        expect(mine.gguf.metadataTypes[key], key).toEqual(ref.gguf.metadataTypes[key]);
      }
      for (const t of mine.gguf.tensors) {
        const start = mine.gguf.tensorDataOffset + t.offset;
        const v = dequantize(t.type, mine.bytes.subarray(start, start + t.byteLength), t.nElements);
        expect(v.every(Number.isFinite), t.name).toBe(true);
      }
    });
  }

  it('quantized model: 128-wide rows fall back from Q4_K to Q5_0 as llama.cpp does; vocab padding', async () => {
    const out = path.join(dir, 'qwen3-q4k.gguf');
    const info = await writeSyntheticModel({ arch: 'qwen3', quant: GgmlType.Q4_K, out, shape: { nVocab: 2304 } });
    const { gguf } = await load(out);
    const type = (name: string): number => gguf.tensors.find((t) => t.name === name)!.type;
    expect(type('blk.0.attn_q.weight')).toBe(GgmlType.Q5_0); // row 128
    expect(type('blk.0.attn_output.weight')).toBe(GgmlType.Q4_K); // row 256
    expect(type('blk.0.ffn_down.weight')).toBe(GgmlType.Q4_K); // row 512
    expect(type('token_embd.weight')).toBe(GgmlType.Q8_0); // tied, row 128: Q6_K → Q8_0
    expect((gguf.metadata['tokenizer.ggml.tokens'] as string[]).length).toBe(2304);
    expect(gguf.tensors.find((t) => t.name === 'token_embd.weight')!.shape).toEqual([128, 2304]);
    expect(info.bytes).toBe(readFileSync(out).length);
  });

  it('rejects bad requests with LlmError and honours AbortSignal', async () => {
    await expect(
      writeSyntheticModel({ arch: 'mamba' as 'llama', quant: GgmlType.F16, out: path.join(dir, 'x.gguf') }),
    ).rejects.toSatisfy((e) => isLlmError(e, 'unsupported-arch'));
    await expect(
      writeSyntheticModel({ arch: 'llama', quant: GgmlType.F16, out: path.join(dir, 'y.gguf'), shape: { nHeadKv: 3 } }),
    ).rejects.toSatisfy((e) => isLlmError(e, 'invalid-request'));
    const ac = new AbortController();
    ac.abort();
    await expect(
      writeSyntheticModel({ arch: 'llama', quant: GgmlType.F16, out: path.join(dir, 'z.gguf'), signal: ac.signal }),
    ).rejects.toSatisfy((e) => isLlmError(e, 'aborted'));
    expect(() => parseQuant('q9_9')).toThrow(/unknown quant/);
    expect(parseQuant('q4_k')).toBe(GgmlType.Q4_K);
    expect(parseShape('n_embd=512,n_layer=3,tied=1')).toEqual({ nEmbd: 512, nLayer: 3, tied: true });
    expect(parseShape('qwen2.5-0.5b')).toBe('qwen2.5-0.5b');
  });
});
