import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { describeLayers } from '../../../src/model/layer-spec.js';
import { loadTransformer, readModelConfig } from '../../../src/model/load.js';
import { type HeaderEdit, loadEdited, recordedHeader, withoutTensor } from '../../helpers/header-edits.js';

const A = 'falcon-h1';

describe('falcon-h1 bad input', () => {
  const fx = recordedHeader(`${A}-q8_0-s1.gguf`);
  const load = (edit: HeaderEdit) => loadEdited(fx, edit);
  const without = withoutTensor;

  it('every layer is attention with a Mamba-2 mixer beside it', () => {
    const layers = describeLayers(readModelConfig(fx.gguf));
    expect(layers.map((l) => (l.kind === 'attention' && l.ssm ? 'attention+ssm' : l.kind))).toEqual([
      'attention+ssm',
      'attention+ssm',
      'attention+ssm',
    ]);
  });

  it('each missing ssm key is named', async () => {
    for (const key of ['conv_kernel', 'state_size', 'group_count', 'time_step_rank', 'inner_size']) {
      const e = await load({ meta: { [`${A}.ssm.${key}`]: undefined } });
      expect(e.code).toBe('gguf-invalid');
      expect(e.message).toContain(`'${A}.ssm.${key}'`);
    }
  });

  it('heads not a multiple of group_count name group_count; a conv width the kernel lacks names the tensor', async () => {
    const g = await load({ meta: { [`${A}.ssm.group_count`]: 3 } });
    expect(g.code).toBe('gguf-invalid');
    expect(g.details?.key).toBe(`${A}.ssm.group_count`);
    const c = await load({ meta: { [`${A}.ssm.conv_kernel`]: 5 } });
    expect(c.code).toBe('gguf-invalid');
    expect(c.details?.tensor).toBe('blk.0.ssm_conv1d.weight');
  });

  it('a layer without its ssm_in, attention or suffix-less ffn_norm names the tensor', async () => {
    for (const name of ['blk.1.ssm_in.weight', 'blk.2.attn_q.weight', 'blk.0.ffn_norm']) {
      const e = await load({ tensors: without(name) });
      expect(e.code, name).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });

  it('a missing ssm_norm is allowed (llama.cpp: not required) and the model loads', async () => {
    const f = without('blk.1.ssm_norm.weight')({ ...fx.gguf });
    const m = await loadTransformer(f, fx.source, createCpuOps(), { contextLength: 32 });
    expect(m.hasRecurrentState).toBe(true);
    m.destroy();
  });
});
