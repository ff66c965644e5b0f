/**
 * Per-layer KV head counts (issue #13, llama.cpp `attention.head_count_kv` as an array). Oracle: stories260K
 * (8 query heads over 4 KV heads of 8) with layer 1 cut to 2 KV heads and layer 3 to 1 computes exactly what the
 * uniform 4-KV-head model computes when those layers' K/V heads are duplicated so that every query head reads the
 * same keys and values (GQA maps query head h to KV head ⌊h / (nHeads / nKvHeads)⌋) — the forward pass through a KV
 * cache sized per layer, on the cpu and wasm backends.
 */

import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import type { Ops } from '../../../src/backend/ops.js';
import { createWasmOps } from '../../../src/backend/wasm/index.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { GgmlType, type GgufValue, GgufValueType } from '../../../src/gguf/types.js';
import { type GgufWriteTensor, writeGguf } from '../../../src/gguf/write.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { loadTransformer } from '../../../src/model/load.js';
import { maxAbsDiff } from '../../helpers/compare.js';
import { readEditableGguf } from '../../helpers/editable-gguf.js';

const PROMPT = Int32Array.from([1, 82, 113, 346, 301, 265, 263, 431]);
/** KV heads per layer of the narrow model; per KV head kept, the original head it takes. */
const KEEP: Readonly<Record<number, readonly number[]>> = { 1: [0, 2], 3: [0] };

/** (uniform, narrow): the same computation with 4 KV heads everywhere, and with KEEP's fewer heads on layers 1 and 3. */
async function variants(): Promise<{ uniform: Uint8Array; narrow: Uint8Array; kvHeads: number[] }> {
  const { metadata, metadataTypes, tensors } = await readEditableGguf('stories260K.gguf');
  const nLayers = Number(metadata['llama.block_count']);
  const nKv = Number(metadata['llama.attention.head_count_kv']);
  const headDim = Number(metadata['llama.embedding_length']) / Number(metadata['llama.attention.head_count']);
  let uniform = tensors;
  let narrow = tensors;
  for (const [layer, keep] of Object.entries(KEEP)) {
    for (const kind of ['attn_k', 'attn_v']) {
      const name = `blk.${layer}.${kind}.weight`;
      const t = tensors.find((x) => x.name === name)!;
      expect(t.type).toBe(GgmlType.F32);
      const nEmbd = t.shape[0];
      const head = (h: number): Float32Array =>
        new Float32Array(t.data.slice(h * headDim * nEmbd * 4, (h + 1) * headDim * nEmbd * 4).buffer);
      const cut = new Float32Array(keep.length * headDim * nEmbd); // [keep.length·headDim rows, nEmbd]
      keep.forEach((h, j) => cut.set(head(h), j * headDim * nEmbd));
      const dup = new Float32Array(nKv * headDim * nEmbd); // KV head j of nKv serves the query heads of kept head ⌊j·keep/nKv⌋
      for (let j = 0; j < nKv; j++) dup.set(head(keep[Math.floor((j * keep.length) / nKv)]), j * headDim * nEmbd);
      const swap = (list: GgufWriteTensor[], data: Float32Array, rows: number): GgufWriteTensor[] =>
        list.map((x) => (x.name === name ? { ...x, shape: [nEmbd, rows], data: new Uint8Array(data.buffer) } : x));
      uniform = swap(uniform, dup, nKv * headDim);
      narrow = swap(narrow, cut, keep.length * headDim);
    }
  }
  const kvHeads = Array.from({ length: nLayers }, (_, il) => KEEP[il]?.length ?? nKv);
  const arrayType = { type: GgufValueType.ARRAY, element: { type: GgufValueType.UINT32 } };
  return {
    uniform: writeGguf({ metadata, metadataTypes, tensors: uniform }),
    narrow: writeGguf({
      metadata: { ...metadata, 'llama.attention.head_count_kv': Uint32Array.from(kvHeads) as unknown as GgufValue },
      metadataTypes: { ...metadataTypes, 'llama.attention.head_count_kv': arrayType as never },
      tensors: narrow,
    }),
    kvHeads,
  };
}

async function logits(bytes: Uint8Array, ops: Ops): Promise<Float32Array> {
  const source = new MemoryByteSource(bytes);
  const model = await loadTransformer(await parseGguf(source), source, ops, { contextLength: 32, ubatchSize: 3 });
  try {
    // A 3-token ubatch: prefill steps over earlier positions, then single-token decode steps.
    const all = (await model.eval(PROMPT, 0, 0, { logits: 'all' }))!;
    const next = (await model.eval(Int32Array.from([500]), PROMPT.length, 0, { logits: 'all' }))!;
    const out = new Float32Array(all.length + next.length);
    out.set(all);
    out.set(next, all.length);
    return out;
  } finally {
    model.destroy();
  }
}

describe('per-layer KV head counts', () => {
  for (const [name, make] of [
    ['cpu', () => Promise.resolve(createCpuOps())],
    ['wasm', () => createWasmOps({ threads: 1 })],
  ] as const) {
    it(`${name}: layers with fewer KV heads equal the uniform model with those heads duplicated`, async () => {
      const { uniform, narrow, kvHeads } = await variants();
      expect(kvHeads).toEqual([4, 2, 4, 1, 4]);
      const a = await logits(uniform, await make());
      const b = await logits(narrow, await make());
      expect(a.length).toBe(b.length);
      expect(maxAbsDiff(a, b)).toBeLessThan(1e-4);
      expect(maxAbsDiff(a, new Float32Array(a.length))).toBeGreaterThan(0.1); // not trivially equal
    });
  }
});
