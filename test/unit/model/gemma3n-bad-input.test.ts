/**
 * gemma3n: the recorded fixture's layer plan and AltUp configuration, llama.cpp's fixed KV split on a 30-layer
 * (E2B-shaped) config, and files whose AltUp keys or tensors disagree → `gguf-invalid` naming the key or tensor
 * (a stream count the `altup_proj` stack does not have, an active stream out of range, per-layer arrays of the wrong
 * length, missing or reshaped LAuReL / AltUp tensors).
 */

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile, GgufValue } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { gemma3n } from '../../../src/model/arch/gemma3n.js';
import { describeLayers, kvLayersOf } from '../../../src/model/layer-spec.js';
import { loadTransformer, readModelConfig } from '../../../src/model/load.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';
import { llmError } from '../../helpers/llm-error.js';

describe('gemma3n config and bad input', () => {
  let source: NodeFileSource;
  let gguf: GgufFile;
  beforeAll(async () => {
    source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, 'gemma3n-q8_0-s1.gguf'));
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

  it('the fixture: 4 streams, active 0, sparse gates on every layer (< 10), own KV everywhere, window on 4 of 5', () => {
    const config = readModelConfig(gguf);
    expect(config.altup).toEqual({ nInputs: 4, activeIdx: 0, sparsity: new Array(5).fill(1.6448533535003662) });
    expect(config.kvSources).toEqual([0, 1, 2, 3, 4]);
    expect(config.slidingLayers).toEqual([true, true, true, true, false]);
    expect(config.perLayerEmbd).toBe(256);
    expect(config.finalSoftcap).toBe(30);
    expect(config.attentionScale).toBe(1);
  });

  it('an E2B-shaped config: layers 20–29 read layer 18 (sliding) or 19 (global); only layers 0–9 are sparse', () => {
    const meta: Record<string, GgufValue> = {
      ...gguf.metadata,
      'gemma3n.block_count': 30,
      'gemma3n.attention.sliding_window_pattern': Array.from({ length: 30 }, (_, il) => il % 5 < 4),
      'gemma3n.activation_sparsity_scale': Float32Array.from({ length: 30 }, (_, il) => (il < 10 ? 1.6 : -Infinity)),
    };
    const config = gemma3n.config(meta);
    expect(config.kvSources.slice(18)).toEqual([18, 19, 18, 18, 18, 18, 19, 18, 18, 18, 18, 19]);
    expect(config.altup?.sparsity.map((z) => z !== null)).toEqual(Array.from({ length: 30 }, (_, il) => il < 10));
    const kv = kvLayersOf(describeLayers(config)).map((l) => l.nKvHeads);
    expect(kv.slice(19, 21)).toEqual([2, 0]);
  });

  it('a stream count the altup_proj stack does not have names the tensor', async () => {
    const e = await load({ meta: { 'gemma3n.altup.num_inputs': 3 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('altup_proj.weight');
  });

  it('an active stream out of range names the key', async () => {
    const e = await load({ meta: { 'gemma3n.altup.active_idx': 4 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'gemma3n.altup.active_idx'");
  });

  it('per-layer arrays of the wrong length name the key', async () => {
    let e = await load({ meta: { 'gemma3n.activation_sparsity_scale': Float32Array.of(1.6, 1.6) } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'gemma3n.activation_sparsity_scale'");
    e = await load({ meta: { 'gemma3n.attention.sliding_window_pattern': [true, false, true] } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'gemma3n.attention.sliding_window_pattern'");
  });

  it('a missing sliding window names the key', async () => {
    const e = await load({ meta: { 'gemma3n.attention.sliding_window': undefined } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'gemma3n.attention.sliding_window'");
  });

  it('missing or reshaped AltUp / LAuReL tensors name the tensor', async () => {
    for (const edit of [
      { drop: 'blk.2.laurel_l.weight' },
      { drop: 'blk.0.altup_router.weight' },
      { drop: 'altup_unembd_proj.weight' },
      { reshape: ['blk.1.altup_predict_coef.weight', [4, 4]] as [string, number[]] },
      { reshape: ['blk.3.laurel_r.weight', [32, 256]] as [string, number[]] },
    ]) {
      const e = await load(edit);
      const name = 'drop' in edit ? edit.drop : edit.reshape[0];
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('a per-layer embedding width the tables do not have names a tensor', async () => {
    const e = await load({ meta: { 'gemma3n.embedding_length_per_layer_input': 128 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toMatch(/per_layer|inp_gate/);
  });
});
