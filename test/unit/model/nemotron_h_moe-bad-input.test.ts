import { describe, expect, it } from 'vitest';
import type { GgufFile } from '../../../src/gguf/types.js';
import { describeLayers } from '../../../src/model/layer-spec.js';
import { readModelConfig } from '../../../src/model/load.js';
import { type HeaderEdit, loadEdited, recordedHeader } from '../../helpers/header-edits.js';

const A = 'nemotron_h_moe';

describe('nemotron_h_moe config and bad input', () => {
  const fx = recordedHeader(`${A}-q8_0-s5.gguf`);
  const load = (edit: HeaderEdit) => loadEdited(fx, edit);
  const without =
    (name: string) =>
    (f: GgufFile): GgufFile => ({
      ...f,
      tensors: f.tensors.filter((t) => t.name !== name),
    });

  it('the FFN-only blocks route to ungated relu² experts with a plain shared expert, sigmoid, normalised, scaled', () => {
    const c = readModelConfig(fx.gguf);
    const layers = describeLayers(c);
    expect(layers.map((l) => l.kind)).toEqual(['mamba2', 'mlp', 'mamba2', 'attention', 'mamba2', 'mlp']);
    expect(layers.map((l) => l.moe !== null)).toEqual([false, true, false, false, false, true]);
    const m = layers[1]!.moe!;
    expect(m).toMatchObject({ gating: 'sigmoid', shared: 'plain', ungated: true, normWeights: true });
    expect([m.nExperts, m.nUsed, m.expertDim, layers[1]!.ffnDim]).toEqual([8, 2, 128, 192]);
    expect(m.weightsScale).toBe(Math.fround(2.5));
  });

  it('expert_weights_norm absent: not normalised; expert_weights_scale 0 or absent: no scaling', () => {
    const c = readModelConfig({
      ...fx.gguf,
      metadata: { ...fx.gguf.metadata, [`${A}.expert_weights_norm`]: false, [`${A}.expert_weights_scale`]: 0 },
    });
    expect(c.moe).toMatchObject({ normWeights: false, weightsScale: 1 });
  });

  it('a missing expert tensor (selection bias included) is named; no gate tensors are asked for', async () => {
    for (const name of [
      'blk.1.ffn_up_exps.weight',
      'blk.1.ffn_down_exps.weight',
      'blk.5.exp_probs_b.bias',
      'blk.5.ffn_up_shexp.weight',
      'blk.1.ffn_down_shexp.weight',
      'blk.1.ffn_gate_inp.weight',
    ]) {
      const e = await load({ tensors: without(name) });
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('latent MoE projections and grouped expert selection are unsupported-arch naming the key', async () => {
    for (const [key, value] of [
      ['moe_latent_size', 64],
      ['expert_group_count', 4],
    ] as const) {
      const e = await load({ meta: { [`${A}.${key}`]: value } });
      expect(e.code, key).toBe('unsupported-arch');
      expect(e.message).toContain(`'${A}.${key}'`);
    }
  });

  it('expert_count missing is gguf-invalid naming the key', async () => {
    const e = await load({ meta: { [`${A}.expert_count`]: undefined } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain(`'${A}.expert_count'`);
  });
});
