/**
 * gemma4 files whose per-layer hyper-parameters and tensors disagree are `gguf-invalid` naming the key or tensor:
 * a sliding pattern of the wrong length, shared-KV layers that leave fewer than two KV layers or make a layer read a
 * layer of other geometry, a missing per-layer embedding width or tensor, experts declared without their tensors.
 * Also the layer plan of the recorded fixture: which layers read which layer's KV, and the 0-width KV of readers.
 */

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile, GgufValue } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { describeLayers, kvLayersOf } from '../../../src/model/layer-spec.js';
import { loadTransformer, readModelConfig } from '../../../src/model/load.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';
import { llmError } from '../../helpers/llm-error.js';

describe('gemma4 bad input', () => {
  let source: NodeFileSource;
  let gguf: GgufFile;
  beforeAll(async () => {
    source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, 'gemma4-q8_0-s1.gguf'));
    gguf = await parseGguf(source);
  });
  afterAll(() => source.close());

  const load = (edit: {
    meta?: Record<string, GgufValue | undefined>;
    drop?: string;
    reshape?: [string, number[]];
  }) => {
    const metadata: Record<string, GgufValue> = { ...gguf.metadata };
    for (const [k, v] of Object.entries(edit.meta ?? {})) {
      if (v === undefined) delete metadata[k];
      else metadata[k] = v;
    }
    const tensors = gguf.tensors
      .filter((t) => t.name !== edit.drop)
      .map((t) => (edit.reshape && t.name === edit.reshape[0] ? { ...t, shape: edit.reshape[1] } : t));
    return llmError(loadTransformer({ ...gguf, metadata, tensors }, source, createCpuOps(), { contextLength: 32 }));
  };

  it('the fixture: the last two layers read layers 1 (sliding) and 2 (global), keeping no KV of their own', () => {
    const config = readModelConfig(gguf);
    expect(config.kvSources).toEqual([0, 1, 2, 1, 2]);
    const layers = describeLayers(config);
    expect(layers.map((l) => (l.kind === 'attention' ? l.headDim : 0))).toEqual([32, 32, 64, 32, 64]);
    expect(kvLayersOf(layers).map((l) => l.nKvHeads * l.headDim)).toEqual([64, 64, 128, 0, 0]);
    expect(config.perLayerEmbd).toBe(64);
    expect(config.finalSoftcap).toBe(30);
  });

  it('a sliding-window pattern of the wrong length names the key', async () => {
    const e = await load({ meta: { 'gemma4.attention.sliding_window_pattern': [true, false, true] } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'gemma4.attention.sliding_window_pattern'");
  });

  it('shared KV layers leaving fewer than two KV layers name the key', async () => {
    for (const shared of [4, 5, 9]) {
      const e = await load({ meta: { 'gemma4.attention.shared_kv_layers': shared } });
      expect(e.code).toBe('gguf-invalid');
      expect(e.message).toContain("'gemma4.attention.shared_kv_layers'");
    }
  });

  it('a shared layer whose source layer has other geometry names the key', async () => {
    // 1 shared layer: layer 4 (global) would read layer 3, a sliding layer of another head size.
    const e = await load({ meta: { 'gemma4.attention.shared_kv_layers': 1 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'gemma4.attention.shared_kv_layers'");
    expect(e.message).toContain('layer 4');
  });

  it('a missing per-layer embedding width names the key', async () => {
    const e = await load({ meta: { 'gemma4.embedding_length_per_layer_input': undefined } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'gemma4.embedding_length_per_layer_input'");
  });

  it('a missing per-layer gate or a per-layer table of another shape names the tensor', async () => {
    let e = await load({ drop: 'blk.2.inp_gate.weight' });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.2.inp_gate.weight');
    e = await load({ reshape: ['per_layer_token_embd.weight', [256, 512]] });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('per_layer_token_embd.weight');
  });

  it('a layer with its own KV but no attn_k names the tensor', async () => {
    const e = await load({ drop: 'blk.1.attn_k.weight' });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.1.attn_k.weight');
  });

  it('experts declared in a dense file are gguf-invalid naming the missing top-k or router', async () => {
    const e = await load({ meta: { 'gemma4.expert_count': 8 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('gemma4.expert_used_count');
    const moe = { 'gemma4.expert_count': 8, 'gemma4.expert_used_count': 2 };
    // The shared expert (the dense FFN) of a MoE file must have one width for every layer.
    const perLayer = await load({ meta: moe });
    expect(perLayer.code).toBe('unsupported-arch');
    expect(perLayer.message).toContain('gemma4.feed_forward_length');
    const r = await load({ meta: { ...moe, 'gemma4.feed_forward_length': 640 } });
    expect(r.code).toBe('gguf-invalid');
    expect(r.message).toContain('blk.0.ffn_gate_inp.weight');
  });
});
