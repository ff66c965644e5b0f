import { describe, expect, it } from 'vitest';
import { type HeaderEdit, loadEdited, recordedHeader, reshapedTensor } from '../../helpers/header-edits.js';

describe('lfm2 bad input', () => {
  const fx = recordedHeader('lfm2-q8_0-s1.gguf');
  const load = (edit: HeaderEdit) => loadEdited(fx, edit);
  const reshaped = reshapedTensor;

  it('a recurrent layer without shortconv.l_cache names head_count_kv and the missing key', async () => {
    const e = await load({ meta: { 'lfm2.shortconv.l_cache': undefined } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'lfm2.attention.head_count_kv'");
    expect(e.message).toContain("'lfm2.shortconv.l_cache'");
  });

  it('l_cache below 2 or huge names the key', async () => {
    for (const v of [1, 0, 2 ** 20]) {
      const e = await load({ meta: { 'lfm2.shortconv.l_cache': v } });
      expect(e.code).toBe('gguf-invalid');
      expect(e.message).toContain("'lfm2.shortconv.l_cache'");
    }
  });

  it('a conv kernel of another width than l_cache names the tensor', async () => {
    const e = await load({ meta: { 'lfm2.shortconv.l_cache': 4 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.tensor).toBe('blk.0.shortconv.conv.weight');
  });

  it('an in_proj that is not 3 × n_embd rows names the tensor', async () => {
    const e = await load({ tensors: reshaped('blk.1.shortconv.in_proj.weight', [256, 512]) });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.1.shortconv.in_proj.weight');
  });

  it('a recurrent layer without its out_proj names the tensor', async () => {
    const e = await load({
      tensors: (f) => ({ ...f, tensors: f.tensors.filter((t) => t.name !== 'blk.3.shortconv.out_proj.weight') }),
    });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.3.shortconv.out_proj.weight');
  });
});
