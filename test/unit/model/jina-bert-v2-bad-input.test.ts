/**
 * jina-bert-v2: ggml's ALiBi slopes (`backend/alibi.ts`, also for a head count that is not a power of two), and its
 * hostile headers — a missing or wrongly shaped tensor is `gguf-invalid` naming it (also the optional `attn_norm_2`
 * of jina-embeddings-v2-base-code, loaded since the embeddings sweep), a missing LayerNorm epsilon names the key.
 */

import { describe, expect, it } from 'vitest';
import { alibiSlopes } from '../../../src/backend/alibi.js';
import {
  type HeaderEdit,
  loadEdited,
  recordedHeader,
  reshapedTensor,
  withoutTensor,
} from '../../helpers/header-edits.js';

describe('ALiBi slopes', () => {
  it("are ggml's: m0^(h+1) below the largest power of two, then odd powers of m1", () => {
    const four = alibiSlopes(4, 8); // n = 4: m0 = 2^-2
    expect([...four]).toEqual([0.25, 0.0625, 0.015625, 0.00390625]);
    const twelve = alibiSlopes(12, 8); // n = 8: m0 = 2^-1, m1 = 2^-0.5
    expect(twelve[7]).toBeCloseTo(2 ** -8, 12);
    expect(twelve[8]).toBeCloseTo(Math.fround(2 ** -0.5), 6);
    expect(twelve[9]).toBeCloseTo(Math.fround(2 ** -0.5) ** 3, 6);
    expect(twelve[11]).toBeCloseTo(Math.fround(2 ** -0.5) ** 7, 6);
  });
});

describe('jina-bert-v2 bad input', () => {
  const fx = recordedHeader('jina-bert-v2-f32-embd-mean-noncausal-s1.gguf');
  const load = (edit: HeaderEdit) => loadEdited(fx, edit, { anyModel: true });

  it('a missing FFN up, attention output or output LayerNorm names the tensor', async () => {
    for (const name of ['blk.1.ffn_up.weight', 'blk.0.attn_output.weight', 'blk.2.layer_output_norm.weight']) {
      const e = await load({ tensors: withoutTensor(name) });
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('a gate or q-norm of the wrong shape names the tensor', async () => {
    const edits: [string, number[]][] = [
      ['blk.1.ffn_gate.weight', [128, 128]],
      ['blk.0.attn_q_norm.weight', [64]],
    ];
    for (const [name, shape] of edits) {
      const e = await load({ tensors: reshapedTensor(name, shape) });
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('an attn_norm_2 of the wrong shape names it; no LayerNorm epsilon names the key', async () => {
    const norm2 = await load({
      tensors: (f) =>
        reshapedTensor(
          'blk.0.attn_norm_2.weight',
          [7],
        )({
          ...f,
          tensors: [
            ...f.tensors,
            { ...f.tensors.find((t) => t.name === 'blk.0.attn_output_norm.weight')!, name: 'blk.0.attn_norm_2.weight' },
          ],
        }),
    });
    expect(norm2.code).toBe('gguf-invalid');
    expect(norm2.message).toContain('blk.0.attn_norm_2.weight');
    const eps = await load({ meta: { 'jina-bert-v2.attention.layer_norm_epsilon': undefined } });
    expect(eps.code).toBe('gguf-invalid');
    expect(eps.message).toContain('jina-bert-v2.attention.layer_norm_epsilon');
  });
});
