/**
 * granitehybrid files whose Mamba-2 hyper-parameters and tensors disagree are `gguf-invalid` naming the key or the
 * tensor, before anything runs: missing or inconsistent `ssm.*` keys, a conv kernel of another width, an in
 * projection or norm of the wrong shape, a Mamba-2 layer lacking its tensors.
 */

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { loadTransformer } from '../../../src/model/load.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';
import { type HeaderEdit, loadEdited, recordedHeader, reshapedTensor } from '../../helpers/header-edits.js';

const A = 'granitehybrid';

describe('granitehybrid bad input', () => {
  const fx = recordedHeader(`${A}-q8_0-s1.gguf`);
  const load = (edit: HeaderEdit) => loadEdited(fx, edit);
  const reshaped = reshapedTensor;

  it('the fixture loads (the edits below are what break it)', async () => {
    const source2 = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, `${A}-q8_0-s1.gguf`));
    const m = await loadTransformer(await parseGguf(source2), source2, createCpuOps(), { contextLength: 32 });
    expect(m.hasRecurrentState).toBe(true);
    m.destroy();
    await source2.close();
  });

  it('each missing ssm key is named', async () => {
    for (const key of ['conv_kernel', 'state_size', 'group_count', 'time_step_rank', 'inner_size']) {
      const e = await load({ meta: { [`${A}.ssm.${key}`]: undefined } });
      expect(e.code).toBe('gguf-invalid');
      expect(e.message).toContain(`'${A}.ssm.${key}'`);
    }
  });

  it('zero or huge ssm counts name the key', async () => {
    for (const key of ['conv_kernel', 'state_size', 'group_count', 'time_step_rank', 'inner_size']) {
      for (const v of [0, 2 ** 30]) {
        const e = await load({ meta: { [`${A}.ssm.${key}`]: v } });
        expect(e.code, `${key} = ${v}`).toBe('gguf-invalid');
        expect(e.message).toContain(`'${A}.ssm.${key}'`);
      }
    }
  });

  it('inner_size not a multiple of time_step_rank names inner_size', async () => {
    const e = await load({ meta: { [`${A}.ssm.inner_size`]: 500 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.key).toBe(`${A}.ssm.inner_size`);
  });

  it('heads not a multiple of group_count name group_count', async () => {
    const e = await load({ meta: { [`${A}.ssm.group_count`]: 3 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.key).toBe(`${A}.ssm.group_count`);
  });

  it('a conv kernel of another width than conv_kernel names the tensor', async () => {
    const e = await load({ meta: { [`${A}.ssm.conv_kernel`]: 3 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.details?.tensor).toBe('blk.0.ssm_conv1d.weight');
  });

  it('a state size the tensors do not have names ssm_in', async () => {
    const e = await load({ meta: { [`${A}.ssm.state_size`]: 16 } });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.0.ssm_in.weight');
  });

  it('an in projection of the wrong width names the tensor', async () => {
    const e = await load({ tensors: reshaped('blk.1.ssm_in.weight', [256, 1152]) });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.1.ssm_in.weight');
  });

  it('a norm not grouped by group_count names the tensor', async () => {
    const e = await load({ tensors: reshaped('blk.0.ssm_norm.weight', [512, 1]) });
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain('blk.0.ssm_norm.weight');
  });

  it('a Mamba-2 layer without its ssm_d or ssm_out names the tensor', async () => {
    for (const name of ['blk.3.ssm_d', 'blk.1.ssm_out.weight']) {
      const e = await load({ tensors: (f) => ({ ...f, tensors: f.tensors.filter((t) => t.name !== name) }) });
      expect(e.code).toBe('gguf-invalid');
      expect(e.message).toContain(name);
    }
  });
});
