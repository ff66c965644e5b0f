import { describe, expect, it } from 'vitest';
import type { GgufFile } from '../../../src/gguf/types.js';
import { describeLayers } from '../../../src/model/layer-spec.js';
import { readModelConfig } from '../../../src/model/load.js';
import { type HeaderEdit, loadEdited, recordedHeader } from '../../helpers/header-edits.js';

const A = 'nemotron_h';

describe('nemotron_h bad input', () => {
  const fx = recordedHeader(`${A}-q8_0-s2.gguf`);
  const load = (edit: HeaderEdit) => loadEdited(fx, edit);
  const without =
    (name: string) =>
    (f: GgufFile): GgufFile => ({
      ...f,
      tensors: f.tensors.filter((t) => t.name !== name),
    });

  it('the per-layer arrays give the layer kinds: Mamba-2, MLP-only, attention without rope or FFN', () => {
    const c = readModelConfig(fx.gguf);
    expect(describeLayers(c).map((l) => l.kind)).toEqual(['mamba2', 'mlp', 'mamba2', 'attention', 'mamba2', 'mlp']);
    expect(c.noRopeLayers.every(Boolean)).toBe(true);
    expect(c.layerFfnDims).toEqual([0, 640, 0, 0, 0, 640]);
    expect(c.normEps).toBeCloseTo(1e-5, 10); // from attention.layer_norm_epsilon (no RMS key in the file)
  });

  it('trailing nextn_predict_layers blocks are left out of the pass; blocks leaving no trunk name the key', async () => {
    // The last block (an MLP here) read as a draft-head block: the trunk is the first five, arrays cut to match.
    const c = readModelConfig({ ...fx.gguf, metadata: { ...fx.gguf.metadata, [`${A}.nextn_predict_layers`]: 1 } });
    expect(describeLayers(c).map((l) => l.kind)).toEqual(['mamba2', 'mlp', 'mamba2', 'attention', 'mamba2']);
    const e = await load({ meta: { [`${A}.nextn_predict_layers`]: 6 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.key).toBe(`${A}.nextn_predict_layers`);
  });

  it('each missing ssm key is named', async () => {
    for (const key of ['conv_kernel', 'state_size', 'group_count', 'time_step_rank', 'inner_size']) {
      const e = await load({ meta: { [`${A}.ssm.${key}`]: undefined } });
      expect(e.code).toBe('gguf-invalid');
      expect(e.message).toContain(`'${A}.ssm.${key}'`);
    }
  });

  it('a per-layer array of the wrong length names the key', async () => {
    for (const key of ['feed_forward_length', 'attention.head_count_kv']) {
      const e = await load({ meta: { [`${A}.${key}`]: Uint32Array.of(0, 640, 0) } });
      expect(e.code).toBe('gguf-invalid');
      expect(e.message).toContain(`'${A}.${key}'`);
    }
  });

  it('inner_size that is not heads × head size of the tensors names the tensor', async () => {
    const e = await load({ meta: { [`${A}.ssm.inner_size`]: 392 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.0.ssm_in.weight');
  });

  it('a missing block tensor of each kind is named', async () => {
    for (const name of ['blk.1.ffn_up.weight', 'blk.2.ssm_conv1d.weight', 'blk.3.attn_k.weight']) {
      const e = await load({ tensors: without(name) });
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('experts (nemotron_h_moe keys) are unsupported-arch', async () => {
    const e = await load({ meta: { [`${A}.expert_count`]: 8, [`${A}.expert_used_count`]: 2 } });
    expect(e.code).toBe('unsupported-arch');
  });
});
