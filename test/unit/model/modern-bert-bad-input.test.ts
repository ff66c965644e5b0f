/**
 * modern-bert's hostile headers: a missing or wrongly shaped tensor (the fused FFN up, the pre-norms, the output norm)
 * is `gguf-invalid` naming it; an unsupported `hidden_activation` is `unsupported-arch` naming the key, a missing
 * LayerNorm epsilon `gguf-invalid` naming it.
 */

import { describe, expect, it } from 'vitest';
import {
  type HeaderEdit,
  loadEdited,
  recordedHeader,
  reshapedTensor,
  withoutTensor,
} from '../../helpers/header-edits.js';

describe('modern-bert bad input', () => {
  const fx = recordedHeader('modern-bert-f32-embd-mean-noncausal-s1.gguf');
  const load = (edit: HeaderEdit) => loadEdited(fx, edit, { anyModel: true });

  it('a missing pre-norm, FFN norm or output norm names the tensor', async () => {
    for (const name of ['blk.2.attn_norm.weight', 'blk.0.ffn_norm.weight', 'output_norm.weight']) {
      const e = await load({ tensors: withoutTensor(name) });
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('an ffn_up that is not gate | up (2 · n_ff rows), or a fused qkv of the wrong width, names the tensor', async () => {
    const edits: [string, number[]][] = [
      ['blk.1.ffn_up.weight', [128, 256]],
      ['blk.3.attn_qkv.weight', [128, 256]],
    ];
    for (const [name, shape] of edits) {
      const e = await load({ tensors: reshapedTensor(name, shape) });
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('a relu FFN is unsupported-arch naming hidden_activation; no LayerNorm epsilon names the key', async () => {
    const act = await load({ meta: { 'modern-bert.hidden_activation': 'relu' } });
    expect(act.code).toBe('unsupported-arch');
    expect(act.message).toContain('modern-bert.hidden_activation');
    const eps = await load({ meta: { 'modern-bert.attention.layer_norm_epsilon': undefined } });
    expect(eps.code).toBe('gguf-invalid');
    expect(eps.message).toContain('modern-bert.attention.layer_norm_epsilon');
  });
});
