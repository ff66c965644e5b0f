/**
 * Layers as data (issue #13): `feed_forward_length` and `attention.head_count` may be per-layer arrays. Oracle: a
 * model whose layer-1 FFN is cut to its first `CUT` hidden units (a per-layer width array) computes exactly what the
 * full-width model computes when those extra units' `ffn_down` columns are zero — on the cpu and wasm backends.
 */

import { describe, expect, it } from 'vitest';
import type { Ops } from '../../../src/backend/ops.js';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../../src/backend/wasm/index.js';
import { getArchitecture } from '../../../src/model/arch/index.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { GgmlType, GgufValueType, type GgufValue } from '../../../src/gguf/types.js';
import { type GgufWriteTensor, writeGguf } from '../../../src/gguf/write.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { attentionLayers } from '../../../src/model/layer-spec.js';
import { loadTransformer } from '../../../src/model/load.js';
import { maxAbsDiff } from '../../helpers/compare.js';
import { readEditableGguf } from '../../helpers/editable-gguf.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const PROMPT = Int32Array.from([1, 82, 113, 346, 301, 265, 263, 431]);
const CUT = 24;

interface Variant {
  metadata: Record<string, GgufValue>;
  tensors: GgufWriteTensor[];
}

async function base(): Promise<{ variant: Variant; metadataTypes: Record<string, never> }> {
  const { metadata, metadataTypes, tensors } = await readEditableGguf('stories260K.gguf');
  return { variant: { metadata, tensors }, metadataTypes: metadataTypes as Record<string, never> };
}

/** (full, cut): layer 1's FFN zero-padded beyond CUT units, and truncated to CUT units with a per-layer width array. */
async function variants(): Promise<{ full: Uint8Array; cut: Uint8Array }> {
  const { variant, metadataTypes } = await base();
  const get = (name: string): GgufWriteTensor => variant.tensors.find((t) => t.name === name)!;
  for (const n of ['blk.1.ffn_gate.weight', 'blk.1.ffn_up.weight', 'blk.1.ffn_down.weight'])
    expect(get(n).type).toBe(GgmlType.F32);
  const down = get('blk.1.ffn_down.weight'); // [nFf per row, nEmbd rows]
  const [nFf, nEmbd] = down.shape;
  const downF = new Float32Array(down.data.slice().buffer);
  const zeroed = downF.slice();
  const cutDown = new Float32Array(CUT * nEmbd);
  for (let r = 0; r < nEmbd; r++) {
    zeroed.fill(0, r * nFf + CUT, (r + 1) * nFf);
    cutDown.set(downF.subarray(r * nFf, r * nFf + CUT), r * CUT);
  }
  const replace = (tensors: GgufWriteTensor[], name: string, t: Partial<GgufWriteTensor>): GgufWriteTensor[] =>
    tensors.map((x) => (x.name === name ? { ...x, ...t } : x));
  const full = replace(variant.tensors, down.name, { data: new Uint8Array(zeroed.buffer) });
  let cut = replace(variant.tensors, down.name, { shape: [CUT, nEmbd], data: new Uint8Array(cutDown.buffer) });
  for (const n of ['blk.1.ffn_gate.weight', 'blk.1.ffn_up.weight']) {
    const t = get(n); // [nEmbd per row, nFf rows]: keep the first CUT rows
    cut = replace(cut, n, { shape: [t.shape[0], CUT], data: t.data.slice(0, t.shape[0] * CUT * 4) });
  }
  const nLayers = Number(variant.metadata['llama.block_count']);
  const widths = Uint32Array.from({ length: nLayers }, (_, il) => (il === 1 ? CUT : nFf));
  const write = (
    tensors: GgufWriteTensor[],
    meta: Record<string, GgufValue>,
    types: Record<string, never>,
  ): Uint8Array => writeGguf({ metadata: meta, metadataTypes: types, tensors });
  return {
    full: write(full, variant.metadata, metadataTypes),
    cut: write(
      cut,
      { ...variant.metadata, 'llama.feed_forward_length': widths as unknown as GgufValue },
      {
        ...metadataTypes,
        'llama.feed_forward_length': { type: GgufValueType.ARRAY, element: { type: GgufValueType.UINT32 } } as never,
      },
    ),
  };
}

async function logits(bytes: Uint8Array, ops: Ops): Promise<Float32Array> {
  const source = new MemoryByteSource(bytes);
  const model = await loadTransformer(await parseGguf(source), source, ops, { contextLength: 32, ubatchSize: 3 });
  try {
    return (await model.eval(PROMPT, 0, 0, { logits: 'all' }))!;
  } finally {
    model.destroy();
  }
}

describe('per-layer hyper-parameters', () => {
  it('reads per-layer FFN widths and head counts into the layer records', () => {
    const meta = (extra: Record<string, GgufValue>): Record<string, GgufValue> => ({
      'general.architecture': 'llama',
      'llama.embedding_length': 64,
      'llama.block_count': 3,
      'llama.attention.head_count': 4,
      'llama.attention.head_count_kv': 2,
      'llama.feed_forward_length': 128,
      ...extra,
    });
    const c = getArchitecture('llama').config(
      meta({
        'llama.feed_forward_length': [128, 96, 160],
        'llama.attention.head_count': [4, 2, 8],
        'llama.attention.key_length': 16,
      }),
    );
    expect(
      attentionLayers(c).map((l) => [
        l.kind,
        l.kind === 'attention' && l.nHeads,
        l.kind === 'attention' && l.nKvHeads,
        l.ffnDim,
      ]),
    ).toEqual([
      ['attention', 4, 2, 128],
      ['attention', 2, 2, 96],
      ['attention', 8, 2, 160],
    ]);
    expect([c.nHeads, c.ffnDim]).toEqual([8, 160]); // buffers are sized by the widest layer
    expect(
      thrownLlmError(() => getArchitecture('llama').config(meta({ 'llama.feed_forward_length': [128, 0, 128] })))
        .message,
    ).toMatch(/'llama\.feed_forward_length' is 0 for layer 1/);
    const perLayerKv = getArchitecture('llama').config(
      meta({ 'llama.attention.head_count_kv': [2, 1, 4], 'llama.attention.key_length': 16 }),
    );
    expect(attentionLayers(perLayerKv).map((l) => [l.nKvHeads, l.headDim])).toEqual([
      [2, 16],
      [1, 16],
      [4, 16],
    ]);
    expect(perLayerKv.nKvHeads).toBe(4);
    // Head sizes per layer (llama.cpp n_embd_head_k_swa): sliding layers take `key_length_swa`, their rope
    // `rope.dimension_count_swa`; gemma2's even layers slide.
    const swa = getArchitecture('gemma2').config({
      ...meta({ 'llama.attention.head_count_kv': [2, 1, 2], 'llama.attention.key_length': 16 }),
      'general.architecture': 'gemma2',
      'gemma2.embedding_length': 64,
      'gemma2.block_count': 3,
      'gemma2.attention.head_count': 4,
      'gemma2.attention.head_count_kv': [2, 1, 2],
      'gemma2.feed_forward_length': 128,
      'gemma2.attention.key_length': 32,
      'gemma2.attention.value_length': 32,
      'gemma2.attention.key_length_swa': 16,
      'gemma2.attention.value_length_swa': 16,
      'gemma2.rope.dimension_count_swa': 8,
    });
    expect(attentionLayers(swa).map((l) => [l.slidingWindow > 0, l.nKvHeads, l.headDim, l.rope?.nRot])).toEqual([
      [true, 2, 16, 8],
      [false, 1, 32, 32],
      [true, 2, 16, 8],
    ]);
    const recurrent = thrownLlmError(() =>
      getArchitecture('llama').config(meta({ 'llama.attention.head_count_kv': [2, 0, 2] })),
    );
    expect(recurrent.code).toBe('unsupported-arch');
    expect(recurrent.message).toMatch(/is 0 on layer 1/);
    expect(
      thrownLlmError(() => getArchitecture('llama').config(meta({ 'llama.attention.head_count_kv': [2, 3, 2] })))
        .message,
    ).toMatch(/not a divisor\) on layer 1/);
    expect(
      thrownLlmError(() => getArchitecture('llama').config(meta({ 'llama.attention.head_count': [4, 3, 4] }))).message,
    ).toMatch(/on layer 1/);
  });

  for (const [name, make] of [
    ['cpu', () => createCpuOps()],
    ['wasm', () => createWasmOps({ threads: 1 })],
  ] as const) {
    it(`${name}: a layer with a narrower FFN equals the full-width model with those units zeroed`, async () => {
      const { full, cut } = await variants();
      const a = await logits(full, await make());
      const b = await logits(cut, await make());
      expect(a.length).toBe(b.length);
      expect(maxAbsDiff(a, b)).toBeLessThan(1e-4);
    });
  }
});
