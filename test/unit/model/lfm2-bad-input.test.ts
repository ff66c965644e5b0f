/**
 * lfm2 files whose short-convolution hyper-parameters and tensors disagree are `gguf-invalid` naming the key or the
 * tensor, before anything runs: a missing or out-of-range `shortconv.l_cache`, a conv kernel of another width, an
 * in_proj that is not B | C | x of n_embd rows each, a recurrent layer lacking its tensors.
 */

import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile, GgufValue } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { loadTransformer } from '../../../src/model/load.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';
import { llmError } from '../../helpers/llm-error.js';

describe('lfm2 bad input', () => {
  let source: NodeFileSource;
  let gguf: GgufFile;
  beforeAll(async () => {
    source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, 'lfm2-q8_0-s1.gguf'));
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
  const reshaped =
    (name: string, shape: number[]) =>
    (f: GgufFile): GgufFile => ({
      ...f,
      tensors: f.tensors.map((t) => (t.name === name ? { ...t, shape } : t)),
    });

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
