/**
 * The MoE variants of the hybrid families (lfm2moe, qwen35moe) and of gemma4 (26B-A4B): their layer records (experts on short-convolution and
 * DeltaNet layers as on attention layers, lfm2moe's dense leading layers and router function) and bad input on their
 * recorded fixtures' headers — expert count vs tensor shape, top-k above the expert count, a missing router or
 * selection bias, an unknown router function — each `gguf-invalid` (or `unsupported-arch`) naming the key or tensor.
 */

import { describe, expect, it } from 'vitest';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile, GgufValue } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { describeLayers } from '../../../src/model/layer-spec.js';
import { readModelConfig } from '../../../src/model/load.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

async function header(file: string): Promise<GgufFile> {
  const source = await NodeFileSource.open(`${RECORDED_FIXTURE_DIR}/${file}`);
  return parseGguf(source).finally(() => source.close());
}

const withMeta = (gguf: GgufFile, extra: Record<string, GgufValue>): GgufFile => ({
  ...gguf,
  metadata: { ...gguf.metadata, ...extra },
});

const without = (gguf: GgufFile, tensor: string): GgufFile => ({
  ...gguf,
  tensors: gguf.tensors.filter((t) => t.name !== tensor),
});

function expectError(gguf: GgufFile, code: string, named: string): void {
  const err = thrownLlmError(() => readModelConfig(gguf));
  expect(err.code, err.message).toBe(code);
  expect(err.message).toContain(`'${named}'`);
}

const FIXTURES = {
  lfm2moe: 'lfm2moe-q8_0-l3-s10.gguf',
  qwen35moe: 'qwen35moe-q8_0-l2-s22.gguf',
  gemma4: 'gemma4-q8_0-moe-s3.gguf',
} as const;

describe('MoE variants of hybrid families', () => {
  it('lfm2moe: dense leading layers, then experts on short-convolution and attention layers', async () => {
    const c = readModelConfig(await header(FIXTURES.lfm2moe)); // 3 layers, attention on layer 1, 1 dense lead
    expect(c.moe).toMatchObject({
      gating: 'sigmoid',
      normWeights: true,
      shared: 'none',
      layerIsMoe: [false, true, true],
    });
    const layers = describeLayers(c);
    expect(layers.map((l) => [l.kind, l.moe !== null, l.ffnDim])).toEqual([
      ['shortconv', false, 640],
      ['attention', true, 0],
      ['shortconv', true, 0],
    ]);
    expect(layers[2].moe).toMatchObject({ nExperts: 8, nUsed: 2, expertDim: 128 });
    const softmax = readModelConfig(withMeta(await header(FIXTURES.lfm2moe), { 'lfm2moe.expert_gating_func': 1 }));
    expect(softmax.moe?.gating).toBe('softmax');
  });

  it('qwen35moe: experts plus the gated shared expert on DeltaNet and attention layers', async () => {
    const c = readModelConfig(await header(FIXTURES.qwen35moe)); // 2 layers: DeltaNet, attention
    expect(c.moe).toMatchObject({ gating: 'softmax', normWeights: true, shared: 'gated', sharedDim: 192 });
    expect(describeLayers(c).map((l) => [l.kind, l.moe?.nExperts, l.ffnDim])).toEqual([
      ['deltanet', 8, 192],
      ['attention', 8, 192],
    ]);
  });

  it('gemma4 MoE: the dense FFN as shared expert beside the experts, with the branch norms', async () => {
    const c = readModelConfig(await header(FIXTURES.gemma4));
    expect(c.moe).toMatchObject({ gating: 'softmax', normWeights: true, shared: 'plain', branchNorms: true });
    expect(describeLayers(c).map((l) => [l.kind, l.moe?.nExperts, l.ffnDim])).toEqual([
      ['attention', 8, 640],
      ['attention', 8, 640],
      ['attention', 8, 640],
    ]);
    const gguf = await header(FIXTURES.gemma4);
    for (const t of [
      'ffn_gate_inp.scale',
      'pre_ffw_norm_2.weight',
      'post_ffw_norm_1.weight',
      'post_ffw_norm_2.weight',
    ]) {
      expectError(without(gguf, `blk.1.${t}`), 'gguf-invalid', `blk.1.${t}`);
    }
  });

  it('gemma4 MoE: a fused ffn_gate_up_exps stack stands for gate and up, shape-checked', async () => {
    const gguf = await header('gemma4-q8_0-moe-fused-s8.gguf');
    const c = readModelConfig(gguf);
    expect(c.moe).toMatchObject({ fusedGateUp: true, nExperts: 6 });
    expect(describeLayers(c)[0].moe).toMatchObject({ fusedGateUp: true, expertDim: 128 });
    expectError(
      withMeta(gguf, { 'gemma4.expert_feed_forward_length': 64 }),
      'gguf-invalid',
      'gemma4.expert_feed_forward_length',
    );
    expectError(without(gguf, 'blk.2.ffn_gate_up_exps.weight'), 'gguf-invalid', 'blk.2.ffn_gate_up_exps.weight');
  });

  for (const arch of ['lfm2moe', 'qwen35moe', 'gemma4'] as const) {
    it(`${arch}: inconsistent experts are gguf-invalid naming the key or tensor`, async () => {
      const gguf = await header(FIXTURES[arch]);
      expectError(withMeta(gguf, { [`${arch}.expert_count`]: 7 }), 'gguf-invalid', `${arch}.expert_count`);
      expectError(withMeta(gguf, { [`${arch}.expert_count`]: 9 }), 'gguf-invalid', `${arch}.expert_count`);
      expectError(withMeta(gguf, { [`${arch}.expert_used_count`]: 9 }), 'gguf-invalid', `${arch}.expert_used_count`);
      expectError(
        withMeta(gguf, { [`${arch}.expert_feed_forward_length`]: 96 }),
        'gguf-invalid',
        `${arch}.expert_feed_forward_length`,
      );
      // The router of a recurrent layer (layer 0 of qwen35moe, layer 2 of lfm2moe) is required like an attention layer's.
      const layer = arch === 'lfm2moe' ? 2 : 0;
      expectError(
        without(gguf, `blk.${layer}.ffn_gate_inp.weight`),
        'gguf-invalid',
        `blk.${layer}.ffn_gate_inp.weight`,
      );
      expectError(
        without(gguf, `blk.${layer}.ffn_down_exps.weight`),
        'gguf-invalid',
        `blk.${layer}.ffn_down_exps.weight`,
      );
    });
  }

  it('lfm2moe: a missing selection bias, expert width or router function is refused', async () => {
    const gguf = await header(FIXTURES.lfm2moe);
    expectError(without(gguf, 'blk.1.exp_probs_b.bias'), 'gguf-invalid', 'blk.1.exp_probs_b.bias');
    const { ['lfm2moe.expert_gating_func']: _g, ...noGating } = gguf.metadata;
    expectError({ ...gguf, metadata: noGating }, 'gguf-invalid', 'lfm2moe.expert_gating_func');
    expectError(withMeta(gguf, { 'lfm2moe.expert_gating_func': 0 }), 'gguf-invalid', 'lfm2moe.expert_gating_func');
    expectError(withMeta(gguf, { 'lfm2moe.expert_gating_func': 4 }), 'unsupported-arch', 'lfm2moe.expert_gating_func');
    const { ['lfm2moe.expert_feed_forward_length']: _w, ...noWidth } = gguf.metadata;
    expectError({ ...gguf, metadata: noWidth }, 'gguf-invalid', 'lfm2moe.expert_feed_forward_length');
    expectError(
      withMeta(gguf, { 'lfm2moe.leading_dense_block_count': 4 }),
      'gguf-invalid',
      'lfm2moe.leading_dense_block_count',
    );
  });
});
