/**
 * Which models fetch the backend's feature kernels (src/model/feature-kernels.ts; on WebGPU the chunk of recurrent,
 * MoE, AltUp, M-RoPE and IQ WGSL). The test setup preloads that chunk for every test file, so this is what fails if a model
 * kind that needs it stops asking for it — or a dense transformer starts fetching it.
 */

import { describe, expect, it } from 'vitest';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { hasIqTensors, needsFeatureKernels } from '../../../src/model/feature-kernels.js';
import { readModelConfig } from '../../../src/model/load.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

async function header(id: string): Promise<GgufFile> {
  const source = await NodeFileSource.open(`${RECORDED_FIXTURE_DIR}/${id}.gguf`);
  return parseGguf(source).finally(() => source.close());
}

describe('feature kernels', () => {
  it('dense transformers (incl. SWA, GQA, NoPE, MXFP4) do not need them', async () => {
    for (const id of ['gemma-q8_0-s1', 'olmo2-q8_0-swa-s2', 'granite-q8_0-gqa4-hd128-s4', 'smollm3-mxfp4-s1']) {
      const gguf = await header(id);
      expect(needsFeatureKernels(readModelConfig(gguf), gguf), id).toBe(false);
    }
  });

  it('recurrent (short conv, DeltaNet, Mamba-2, parallel Mamba-2), MoE, AltUp, M-RoPE and IQ models need them', async () => {
    const ids = [
      'lfm2-q8_0-s1',
      'qwen35-q4_k-mix-s2',
      'granitehybrid-q8_0-s1',
      'nemotron_h-q8_0-s2',
      'nemotron_h_moe-q8_0-s5',
      'falcon-h1-q8_0-s1',
      'qwen2moe-q8_0-s1',
      'gpt-oss-q8_0-s1',
      'gemma4-q8_0-moe-s3',
      'gemma3n-q8_0-s1',
      'smollm3-iq2_xxs-s1',
      'qwen2vl-q8_0-s1',
      'qwen3vl-q8_0-s1',
    ];
    for (const id of ids) {
      const gguf = await header(id);
      expect(needsFeatureKernels(readModelConfig(gguf), gguf), id).toBe(true);
    }
    expect(hasIqTensors(await header('smollm3-iq2_xxs-s1'))).toBe(true);
    expect(hasIqTensors(await header('smollm3-mxfp4-s1'))).toBe(false);
  });
});
