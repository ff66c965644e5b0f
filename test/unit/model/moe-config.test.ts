/**
 * Mixture-of-experts hyper-parameters and tensors: llama.cpp's keys and defaults (expert_feed_forward_length =
 * n_ff / n_expert_used when absent, per-layer expert_used_count), the architectures' routing, and bad input —
 * missing or zero counts, top-k above the expert count, a per-layer array of the wrong length, experts in a dense
 * architecture, a router or expert stack whose shape disagrees with the header, a missing router — each a clean
 * LlmError naming the key or tensor. Tensor checks run on a recorded fixture's header (no weights are read).
 */

import { describe, expect, it } from 'vitest';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile, GgufValue } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { getArchitecture } from '../../../src/model/arch/index.js';
import { readModelConfig } from '../../../src/model/load.js';
import { describeLayers } from '../../../src/model/layer-spec.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

const meta = (arch: string, extra: Record<string, GgufValue> = {}): Record<string, GgufValue> => ({
  'general.architecture': arch,
  [`${arch}.embedding_length`]: 64,
  [`${arch}.block_count`]: 3,
  [`${arch}.attention.head_count`]: 4,
  [`${arch}.feed_forward_length`]: 256,
  [`${arch}.expert_count`]: 8,
  [`${arch}.expert_used_count`]: 2,
  ...extra,
});

function expectInvalid(arch: string, extra: Record<string, GgufValue>, key: string): void {
  const err = thrownLlmError(() => getArchitecture(arch).config(meta(arch, extra)));
  expect(err.code, err.message).toBe('gguf-invalid');
  expect(err.message).toContain(`'${key}'`);
}

async function header(file: string): Promise<GgufFile> {
  const source = await NodeFileSource.open(`${RECORDED_FIXTURE_DIR}/${file}`);
  return parseGguf(source).finally(() => source.close());
}

describe('mixture-of-experts config', () => {
  it('reads llama.cpp keys and defaults, and each architecture routes as its llama.cpp graph', () => {
    const q3 = getArchitecture('qwen3moe').config(meta('qwen3moe', { 'qwen3moe.expert_feed_forward_length': 96 }));
    expect(q3.moe).toMatchObject({ nExperts: 8, gating: 'softmax', normWeights: true, shared: 'none', sharedDim: 0 });
    expect(q3.moe?.layerExpertDims).toEqual([96, 96, 96]);
    const layers = describeLayers(q3);
    expect(layers[0]).toMatchObject({ ffnDim: 0, moe: { nExperts: 8, nUsed: 2, expertDim: 96, weightsScale: 1 } });
    // expert_feed_forward_length absent: n_ff / n_expert_used; per-layer expert_used_count.
    const q2 = getArchitecture('qwen2moe').config(
      meta('qwen2moe', { 'qwen2moe.expert_used_count': new Uint32Array([1, 2, 4]) }),
    );
    expect(q2.moe).toMatchObject({ normWeights: false, shared: 'gated', sharedDim: 256, layerUsed: [1, 2, 4] });
    expect(q2.moe?.layerExpertDims).toEqual([256, 128, 64]);
    expect(describeLayers(q2).map((l) => l.ffnDim)).toEqual([256, 256, 256]); // the shared expert's width
    const sh = getArchitecture('qwen2moe').config(
      meta('qwen2moe', { 'qwen2moe.expert_shared_feed_forward_length': 48 }),
    );
    expect(sh.moe?.sharedDim).toBe(48);
    // olmoe: experts are feed_forward_length wide (its graph never reads the expert key); full-width q/k norms.
    const ol = getArchitecture('olmoe').config(meta('olmoe', { 'olmoe.expert_feed_forward_length': 7 }));
    expect(ol.moe).toMatchObject({ normWeights: false, shared: 'none', layerExpertDims: [256, 256, 256] });
    expect(ol.qkNormScope).toBe('all-heads');
    // ernie4_5-moe: dense leading layers, experts every interleave step, a plain shared expert only when sized.
    const ek = (k: string): string => `ernie4_5-moe.${k}`;
    const er = getArchitecture('ernie4_5-moe').config(
      meta('ernie4_5-moe', {
        [ek('block_count')]: 5,
        [ek('interleave_moe_layer_step')]: 2,
        [ek('leading_dense_block_count')]: 2,
        [ek('expert_shared_feed_forward_length')]: 64,
      }),
    );
    expect(er.moe?.layerIsMoe).toEqual([false, false, false, true, false]);
    expect(describeLayers(er).map((l) => [l.kind === 'attention' && l.moe !== null, l.ffnDim])).toEqual([
      [false, 256],
      [false, 256],
      [false, 256],
      [true, 64],
      [false, 256],
    ]);
    expect(er.moe).toMatchObject({ shared: 'plain', sharedDim: 64, normWeights: true });
    const noShared = getArchitecture('ernie4_5-moe').config(
      meta('ernie4_5-moe', { [ek('interleave_moe_layer_step')]: 1 }),
    );
    expect(noShared.moe).toMatchObject({ shared: 'none', sharedDim: 0, layerIsMoe: [true, true, true] });
    // granitemoe: experts n_ff wide, granite's multipliers (the residual scale also scales the experts' sum).
    const gr = getArchitecture('granitemoe').config(
      meta('granitemoe', { 'granitemoe.logit_scale': 4, 'granitemoe.residual_scale': 0.25 }),
    );
    expect(gr.moe).toMatchObject({ shared: 'none', normWeights: true, layerExpertDims: [256, 256, 256] });
    expect(gr.residualScale).toBe(0.25);
    const err = thrownLlmError(() => getArchitecture('ernie4_5-moe').config(meta('ernie4_5-moe')));
    expect(err.code).toBe('gguf-invalid');
    expect(err.message).toContain(`'${ek('interleave_moe_layer_step')}'`);
  });

  it('bad counts are gguf-invalid naming the key', () => {
    for (const arch of ['qwen3moe', 'qwen2moe', 'olmoe']) {
      const count = `${arch}.expert_count`;
      const used = `${arch}.expert_used_count`;
      expectInvalid(arch, { [count]: 0 }, count);
      expectInvalid(arch, { [count]: 100000 }, count);
      expectInvalid(arch, { [used]: 0 }, used);
      expectInvalid(arch, { [used]: 9 }, used); // top-k above the expert count
      expectInvalid(arch, { [used]: new Uint32Array([2, 2]) }, used); // one entry per layer wanted
      expectInvalid(arch, { [used]: new Uint32Array([2, 9, 2]) }, used);
      if (arch !== 'olmoe') {
        expectInvalid(arch, { [`${arch}.expert_feed_forward_length`]: 0 }, `${arch}.expert_feed_forward_length`);
      }
    }
    const noCount = meta('qwen3moe');
    delete noCount['qwen3moe.expert_count'];
    const err = thrownLlmError(() => getArchitecture('qwen3moe').config(noCount));
    expect(err.code).toBe('gguf-invalid');
    expect(err.message).toContain("'qwen3moe.expert_count'");
  });

  it('experts in a dense architecture are unsupported-arch naming the key', () => {
    const err = thrownLlmError(() => getArchitecture('qwen3').config({ ...meta('qwen3'), 'qwen3.expert_count': 8 }));
    expect(err.code).toBe('unsupported-arch');
    expect(err.message).toContain("'qwen3.expert_count'");
  });

  it('tensor shapes that disagree with the header are gguf-invalid naming the key; a missing router names it', async () => {
    const gguf = await header('qwen3moe-q8_0-s2.gguf');
    expect(readModelConfig(gguf).moe?.nExperts).toBe(8);
    const withMeta = (extra: Record<string, GgufValue>): GgufFile => ({
      ...gguf,
      metadata: { ...gguf.metadata, ...extra },
    });
    for (const [key, value] of [
      ['qwen3moe.expert_count', 7],
      ['qwen3moe.expert_feed_forward_length', 64],
    ] as const) {
      const err = thrownLlmError(() => readModelConfig(withMeta({ [key]: value })));
      expect(err.code, err.message).toBe('gguf-invalid');
      expect(err.message).toContain(`'${key}'`);
    }
    const noRouter: GgufFile = { ...gguf, tensors: gguf.tensors.filter((t) => t.name !== 'blk.1.ffn_gate_inp.weight') };
    const err = thrownLlmError(() => readModelConfig(noRouter));
    expect(err.code).toBe('gguf-invalid');
    expect(err.message).toContain("'blk.1.ffn_gate_inp.weight'");
    const flat: GgufFile = {
      ...gguf,
      tensors: gguf.tensors.map((t) =>
        t.name === 'blk.2.ffn_down_exps.weight' ? { ...t, shape: [t.shape[0], t.shape[1] * t.shape[2]] } : t,
      ),
    };
    const e2 = thrownLlmError(() => readModelConfig(flat));
    expect(e2.code).toBe('gguf-invalid');
    expect(e2.message).toContain("'blk.2.ffn_down_exps.weight'");
  });
});
