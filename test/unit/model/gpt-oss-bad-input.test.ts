import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { loadTransformer } from '../../../src/model/load.js';
import {
  type HeaderEdit,
  loadEdited,
  recordedHeader,
  withoutTensor,
  reshapedTensor,
} from '../../helpers/header-edits.js';

describe('gpt-oss bad input', () => {
  const fx = recordedHeader('gpt-oss-q8_0-s1.gguf');
  const load = (edit: HeaderEdit) => loadEdited(fx, edit);
  const without = withoutTensor;
  const reshaped = reshapedTensor;

  it('loads as recorded', async () => {
    const model = await loadTransformer(fx.gguf, fx.source, createCpuOps(), { contextLength: 32 });
    expect(model.config.slidingLayers).toEqual([true, false, true, false]);
    expect(model.config.moe?.gating).toBe('softmax-weight');
  });

  it('a missing sliding window names the key', async () => {
    const e = await load({ meta: { 'gpt-oss.attention.sliding_window': undefined } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'gpt-oss.attention.sliding_window'");
  });

  it('a sliding-layer rope base of its own is refused naming the key (one equal to the global base loads)', async () => {
    const e = await load({ meta: { 'gpt-oss.rope.freq_base_swa': 10000 } });
    expect(e.code).toBe('unsupported-arch');
    expect(e.message).toContain("'gpt-oss.rope.freq_base_swa'");
    const same = fx.gguf.metadata['gpt-oss.rope.freq_base'];
    await expect(
      loadTransformer(
        { ...fx.gguf, metadata: { ...fx.gguf.metadata, 'gpt-oss.rope.freq_base_swa': same } },
        fx.source,
        createCpuOps(),
        {
          contextLength: 32,
        },
      ),
    ).resolves.toBeDefined();
  });

  it('more experts per token than experts names expert_used_count', async () => {
    const e = await load({ meta: { 'gpt-oss.expert_used_count': 6 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.key).toBe('gpt-oss.expert_used_count');
  });

  it('each missing gpt-oss tensor is named', async () => {
    for (const name of [
      'blk.1.attn_sinks.weight',
      'blk.2.ffn_gate_inp.bias',
      'blk.0.ffn_up_exps.bias',
      'blk.3.ffn_down_exps.bias',
      'blk.0.post_attention_norm.weight',
    ]) {
      const e = await load({ tensors: without(name) });
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('an expert bias of another expert count or width names the tensor and the key', async () => {
    const e = await load({ tensors: reshaped('blk.0.ffn_gate_exps.bias', [96, 4]) });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.0.ffn_gate_exps.bias');
    expect(e.details?.key).toBe('gpt-oss.expert_count');
    const w = await load({ tensors: reshaped('blk.1.ffn_down_exps.bias', [255, 5]) });
    expect(w.details?.tensor).toBe('blk.1.ffn_down_exps.bias');
    expect(w.details?.key).toBe('gpt-oss.embedding_length');
    const r = await load({ tensors: reshaped('blk.2.ffn_gate_inp.bias', [6]) });
    expect(r.details?.key).toBe('gpt-oss.expert_count');
  });

  it('sinks of another head count name the tensor', async () => {
    const e = await load({ tensors: reshaped('blk.0.attn_sinks.weight', [3]) });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.0.attn_sinks.weight');
  });
});
