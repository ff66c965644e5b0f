import { describe, expect, it } from 'vitest';
import { type HeaderEdit, loadEdited, recordedHeader, reshapedTensor } from '../../helpers/header-edits.js';

describe('qwen35 bad input', () => {
  const fx = recordedHeader('qwen35-q8_0-s1.gguf');
  const load = (edit: HeaderEdit) => loadEdited(fx, edit);
  const reshaped = reshapedTensor;

  it('each missing ssm key is named', async () => {
    for (const key of ['conv_kernel', 'state_size', 'group_count', 'time_step_rank', 'inner_size']) {
      const e = await load({ meta: { [`qwen35.ssm.${key}`]: undefined } });
      expect(e.code).toBe('gguf-invalid');
      expect(e.message).toContain(`'qwen35.ssm.${key}'`);
    }
  });

  it('zero or huge ssm counts name the key', async () => {
    for (const v of [0, 2 ** 30]) {
      const e = await load({ meta: { 'qwen35.ssm.state_size': v } });
      expect(e.code).toBe('gguf-invalid');
      expect(e.message).toContain("'qwen35.ssm.state_size'");
    }
  });

  it('inner_size other than state_size × time_step_rank names inner_size', async () => {
    const e = await load({ meta: { 'qwen35.ssm.inner_size': 96 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.key).toBe('qwen35.ssm.inner_size');
  });

  it('value heads not a multiple of key heads name time_step_rank', async () => {
    const e = await load({ meta: { 'qwen35.ssm.time_step_rank': 3, 'qwen35.ssm.inner_size': 96 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.key).toBe('qwen35.ssm.time_step_rank');
  });

  it('a conv kernel of another width than conv_kernel names the tensor', async () => {
    const e = await load({ meta: { 'qwen35.ssm.conv_kernel': 3 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.tensor).toBe('blk.0.ssm_conv1d.weight');
  });

  it('a mixed projection of the wrong width names the tensor', async () => {
    const e = await load({ tensors: reshaped('blk.1.attn_qkv.weight', [256, 224]) });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.1.attn_qkv.weight');
  });

  it('a per-layer head_count_kv of another length than block_count names the key (llama.cpp refuses it too)', async () => {
    // [2, 0]: one attention value, as the collapse to a scalar would read it, but 2 entries for 4 layers.
    const e = await load({ meta: { 'qwen35.attention.head_count_kv': [2, 0] } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.key).toBe('qwen35.attention.head_count_kv');
  });

  it('a recurrent layer without its ssm_out names the tensor', async () => {
    const e = await load({
      tensors: (f) => ({ ...f, tensors: f.tensors.filter((t) => t.name !== 'blk.2.ssm_out.weight') }),
    });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.2.ssm_out.weight');
  });

  it('an attention q projection without its output gates names the head count', async () => {
    const e = await load({ tensors: reshaped('blk.3.attn_q.weight', [256, 256]) });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.3.attn_q.weight');
  });
});
