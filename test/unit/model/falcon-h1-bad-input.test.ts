/**
 * falcon-h1 files whose Mamba-2 hyper-parameters or tensors disagree are `gguf-invalid` naming the key or the tensor;
 * every layer is attention with a Mamba-2 mixer beside it, and ssm_norm may be absent (the nonorm fixture).
 */

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile, GgufValue } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { describeLayers } from '../../../src/model/layer-spec.js';
import { loadTransformer, readModelConfig } from '../../../src/model/load.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';
import { llmError } from '../../helpers/llm-error.js';

const A = 'falcon-h1';

describe('falcon-h1 bad input', () => {
  let source: NodeFileSource;
  let gguf: GgufFile;
  beforeAll(async () => {
    source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, `${A}-q8_0-s1.gguf`));
    gguf = await parseGguf(source);
  });
  afterAll(() => source.close());

  const load = (edit: { meta?: Record<string, GgufValue | undefined>; tensors?: (f: GgufFile) => GgufFile }) => {
    const metadata: Record<string, GgufValue> = { ...gguf.metadata };
    for (const [k, v] of Object.entries(edit.meta ?? {})) {
      if (v === undefined) delete metadata[k];
      else metadata[k] = v;
    }
    const file = (edit.tensors ?? ((f) => f))({ ...gguf, metadata });
    return llmError(loadTransformer(file, source, createCpuOps(), { contextLength: 32 }));
  };
  const without =
    (name: string) =>
    (f: GgufFile): GgufFile => ({ ...f, tensors: f.tensors.filter((t) => t.name !== name) });

  it('every layer is attention with a Mamba-2 mixer beside it', () => {
    const layers = describeLayers(readModelConfig(gguf));
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
    const f = without('blk.1.ssm_norm.weight')({ ...gguf });
    const m = await loadTransformer(f, source, createCpuOps(), { contextLength: 32 });
    expect(m.hasRecurrentState).toBe(true);
    m.destroy();
  });
});
