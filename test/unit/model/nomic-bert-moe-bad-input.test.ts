/**
 * nomic-bert-moe's hostile headers: a MoE layer's missing or wrongly shaped expert tensors, a dense layer's missing
 * FFN, more experts used than exist and a missing expert_count are `gguf-invalid` naming the tensor or key.
 */

import { describe, expect, it } from 'vitest';
import {
  type HeaderEdit,
  loadEdited,
  recordedHeader,
  reshapedTensor,
  withoutTensor,
} from '../../helpers/header-edits.js';

describe('nomic-bert-moe bad input', () => {
  const fx = recordedHeader('nomic-bert-moe-f32-embd-mean-noncausal-s1.gguf');
  const load = (edit: HeaderEdit) => loadEdited(fx, edit, { anyModel: true });

  it('a MoE layer without its up experts, or a dense layer without ffn_up, names the tensor', async () => {
    for (const name of ['blk.1.ffn_up_exps.weight', 'blk.3.ffn_gate_inp.weight', 'blk.2.ffn_up.weight']) {
      const e = await load({ tensors: withoutTensor(name) });
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('an expert stack or router of the wrong shape names the tensor', async () => {
    const edits: [string, number[]][] = [
      ['blk.1.ffn_down_exps.weight', [256, 128, 4]],
      ['blk.3.ffn_gate_inp.weight', [128, 6]],
    ];
    for (const [name, shape] of edits) {
      const e = await load({ tensors: reshapedTensor(name, shape) });
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('more experts used than exist, or no expert_count, names the key', async () => {
    const used = await load({ meta: { 'nomic-bert-moe.expert_used_count': 9 } });
    expect(used.code).toBe('gguf-invalid');
    expect(used.message).toContain('nomic-bert-moe.expert_used_count');
    const count = await load({ meta: { 'nomic-bert-moe.expert_count': undefined } });
    expect(count.code).toBe('gguf-invalid');
    expect(count.message).toContain('nomic-bert-moe.expert_count');
  });
});
