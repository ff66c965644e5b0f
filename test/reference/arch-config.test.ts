/**
 * The architecture registry and `ModelConfig` defaults: every entry reads its fixture's metadata, llama.cpp's
 * defaults apply when keys are absent (head size, KV heads, rope, gemma sliding patterns and soft-caps), and an
 * unknown architecture is `unsupported-arch` naming it.
 */

import { describe, expect, it } from 'vitest';
import { isLlmError } from '../../src/errors.js';
import { parseGguf } from '../../src/gguf/parse.js';
import type { GgufValue } from '../../src/gguf/types.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { architectureNames, getArchitecture } from '../../src/model/arch/index.js';
import { describeLayers } from '../../src/model/layer-spec.js';
import { readModelConfig } from '../../src/model/load.js';
import { listEmbeddingOnlyFixtures, listReferenceFixtures } from '../helpers/reference-json.js';
import { listGgufFiles } from '../helpers/shared-path.js';

const minimal = (arch: string, extra: Record<string, GgufValue> = {}): Record<string, GgufValue> => ({
  'general.architecture': arch,
  [`${arch}.embedding_length`]: 64,
  [`${arch}.block_count`]: 12,
  [`${arch}.attention.head_count`]: 4,
  [`${arch}.feed_forward_length`]: 128,
  ...extra,
});

describe('architecture registry', () => {
  it('has one entry per name', () => {
    const names = architectureNames();
    expect(new Set(names).size).toBe(names.length);
    expect(names).toEqual(expect.arrayContaining(['llama', 'qwen2', 'qwen3', 'phi3', 'gemma2', 'gemma3']));
  });

  it('unknown architectures are unsupported-arch, naming the value', () => {
    try {
      getArchitecture('rwkv7');
      expect.unreachable();
    } catch (e) {
      expect(isLlmError(e, 'unsupported-arch')).toBe(true);
      expect((e as Error).message).toContain("'rwkv7'");
    }
  });

  it('applies llama.cpp defaults', () => {
    const c = getArchitecture('llama').config(minimal('llama'));
    expect(c).toMatchObject({
      nKvHeads: 4,
      headDim: 16,
      ropeDims: 16,
      ropeTheta: 10000,
      ropeFreqScale: 1,
      normEps: 1e-5,
      slidingWindow: 0,
    });
    expect(c.attentionScale).toBeCloseTo(1 / 4, 12);
    const scaled = getArchitecture('qwen2').config(minimal('qwen2', { 'qwen2.rope.scaling.factor': 4 }));
    expect(scaled.ropeFreqScale).toBe(0.25);
    expect(scaled.ropeKind).toBe('neox');
    const none = getArchitecture('llama').config(
      minimal('llama', { 'llama.rope.scaling.type': 'none', 'llama.rope.scaling.factor': 4 }),
    );
    expect(none.ropeFreqScale).toBe(1); // llama.cpp never scales with type none
    const yarn = getArchitecture('qwen2').config(
      minimal('qwen2', {
        'qwen2.rope.scaling.type': 'yarn',
        'qwen2.rope.scaling.factor': 4,
        'qwen2.rope.scaling.original_context_length': 32768,
      }),
    );
    expect(yarn.ropeYarn).toEqual({ extFactor: 1, attnFactor: 1, betaFast: 32, betaSlow: 1, nCtxOrig: 32768 });
    expect(() => getArchitecture('llama').config(minimal('llama', { 'llama.rope.scaling.type': 'su' }))).toThrow(
      /'su'/,
    );
    expect(() => getArchitecture('llama').config(minimal('llama', { 'llama.expert_count': 8 }))).toThrow(
      /mixture of 8 experts/,
    );
  });

  it("YaRN beta/log-multiplier keys apply only where llama.cpp's loader reads them (mistral3)", () => {
    // Converters write rope.scaling.yarn_beta_fast/_slow for any arch whose HF config has them; llama.cpp reads them
    // (and yarn_log_multiplier) for mistral3 only, so a qwen3 or llama file keeps 32, 1 and no log multiplier.
    const keys = (arch: string): Record<string, GgufValue> => ({
      [`${arch}.rope.scaling.type`]: 'yarn',
      [`${arch}.rope.scaling.factor`]: 4,
      [`${arch}.rope.scaling.original_context_length`]: 8,
      [`${arch}.rope.scaling.yarn_beta_fast`]: 4,
      [`${arch}.rope.scaling.yarn_beta_slow`]: 0.5,
      [`${arch}.rope.scaling.yarn_log_multiplier`]: 0.5,
    });
    for (const arch of ['llama', 'qwen2', 'qwen3', 'phi3', 'gemma3']) {
      const c = getArchitecture(arch).config(minimal(arch, keys(arch)));
      expect(c.ropeYarn, arch).toEqual({ extFactor: 1, attnFactor: 1, betaFast: 32, betaSlow: 1, nCtxOrig: 8 });
    }
    const m = getArchitecture('mistral3').config(minimal('mistral3', keys('mistral3')));
    const mscale = 0.1 * 0.5 * Math.log(4) + 1;
    expect(m.ropeYarn).toEqual({ extFactor: 1, attnFactor: 1 / mscale, betaFast: 4, betaSlow: 0.5, nCtxOrig: 8 });
    // original_context_length 0 is "unset" for llama.cpp's context: YaRN then uses the training context.
    const unset = getArchitecture('llama').config(
      minimal('llama', {
        ...keys('llama'),
        'llama.rope.scaling.original_context_length': 0,
        'llama.context_length': 64,
      }),
    );
    expect(unset.ropeYarn?.nCtxOrig).toBe(64);
  });

  it('llama refuses a rope.dimension_count other than the head size, as llama.cpp does (invalid n_rot)', () => {
    let caught: unknown;
    try {
      getArchitecture('llama').config(minimal('llama', { 'llama.rope.dimension_count': 8 }));
    } catch (e) {
      caught = e;
    }
    expect(isLlmError(caught) && caught.code).toBe('gguf-invalid');
    expect(String(caught)).toContain("'llama.rope.dimension_count' = 8 must equal the head size 16");
    // qwen3 (no such check in llama.cpp) keeps partial rotary.
    expect(getArchitecture('qwen3').config(minimal('qwen3', { 'qwen3.rope.dimension_count': 8 })).ropeDims).toBe(8);
  });

  it('qwen2, phi3, olmo2 and exaone4 need heads × head size = n_embd (llama.cpp: attn_output [n_embd, n_embd])', () => {
    for (const arch of ['qwen2', 'phi3', 'olmo2', 'exaone4']) {
      let caught: unknown;
      try {
        getArchitecture(arch).config(minimal(arch, { [`${arch}.attention.key_length`]: 32 }));
      } catch (e) {
        caught = e;
      }
      expect(isLlmError(caught) && caught.code, arch).toBe('gguf-invalid');
      expect(String(caught)).toContain(`'${arch}.attention.head_count' 4 × '${arch}.attention.key_length' 32 = 128`);
      expect(getArchitecture(arch).config(minimal(arch)).headDim).toBe(16);
    }
    // llama and qwen3 size attn_output [n_head × head size, n_embd]: a wider head is fine.
    expect(getArchitecture('qwen3').config(minimal('qwen3', { 'qwen3.attention.key_length': 32 })).headDim).toBe(32);
  });

  it("rope.scaling.attn_factor scales gemma3's and gemma-embedding's sliding layers too (llama.cpp), not olmo2's", () => {
    const ropes = (arch: string) =>
      describeLayers(
        getArchitecture(arch).config(
          minimal(arch, {
            [`${arch}.attention.sliding_window`]: 4,
            [`${arch}.attention.sliding_window_pattern`]: 2,
            [`${arch}.rope.scaling.attn_factor`]: 0.8,
          }),
        ),
      ).map((l) => (l.kind === 'attention' && l.rope ? l.rope : null));
    const [local, global] = ropes('gemma3');
    expect(local).toMatchObject({ theta: 10000, freqScale: 1, yarn: { extFactor: 0, attnFactor: 0.8 } });
    expect(global?.yarn?.attnFactor).toBe(0.8);
    // gemma-embedding's local layers too (gemma3n, gemma4, modern-bert: the recorded `attnf` fixtures vs llama.cpp)
    const [embLocal] = ropes('gemma-embedding');
    expect(embLocal).toMatchObject({ theta: 10000, freqScale: 1, yarn: { extFactor: 0, attnFactor: 0.8 } });
    const [olmoLocal, olmoGlobal] = ropes('olmo2');
    expect(olmoLocal?.yarn).toBeNull(); // olmo2's sliding layers rope with ext_factor 0, attn_factor 1
    expect(olmoGlobal?.yarn?.attnFactor).toBe(0.8);
  });

  it("gemma2's sliding layers use rope.freq_base_swa with the global scaling (llama.cpp), else the global rope", () => {
    const ropes = (extra: Record<string, GgufValue>) =>
      describeLayers(getArchitecture('gemma2').config(minimal('gemma2', extra))).map((l) =>
        l.kind === 'attention' ? l.rope : null,
      );
    const [local, global] = ropes({ 'gemma2.rope.scaling.factor': 4, 'gemma2.rope.freq_base_swa': 500 });
    expect(local).toMatchObject({ theta: 500, freqScale: 0.25 });
    expect(global).toMatchObject({ theta: 10000, freqScale: 0.25 });
    const [plainLocal, plainGlobal] = ropes({});
    expect(plainLocal).toEqual(plainGlobal);
  });

  it('gemma2: alternate sliding layers, soft-cap defaults 50/30', () => {
    const c = getArchitecture('gemma2').config(minimal('gemma2', { 'gemma2.attention.sliding_window': 4096 }));
    expect(c.slidingLayers.slice(0, 4)).toEqual([true, false, true, false]);
    expect(c).toMatchObject({
      attnSoftcap: 50,
      finalSoftcap: 30,
      scaleEmbeddings: true,
      activation: 'gelu',
      postNorms: true,
    });
  });

  it('gemma3: every 6th layer global, local rope base 10000 unscaled, global layers keep the scaling', () => {
    const c = getArchitecture('gemma3').config(
      minimal('gemma3', {
        'gemma3.attention.sliding_window': 512,
        'gemma3.rope.freq_base': 1e6,
        'gemma3.rope.scaling.factor': 8,
      }),
    );
    expect(c.slidingLayers.map((s) => (s ? 'L' : 'G')).join('')).toBe('LLLLLGLLLLLG');
    expect(c.ropeSwa).toEqual({ theta: 10000, freqScale: 1, withYarn: true });
    expect(c).toMatchObject({ ropeTheta: 1e6, ropeFreqScale: 0.125, attnSoftcap: 0, finalSoftcap: 0, qkNorm: true });
  });

  it('rejects impossible head groupings and missing keys with gguf-invalid', () => {
    const bad = () => getArchitecture('llama').config(minimal('llama', { 'llama.attention.head_count_kv': 3 }));
    expect(bad).toThrow(/3 KV heads/);
    const missing = minimal('llama');
    delete missing['llama.block_count'];
    expect(() => getArchitecture('llama').config(missing)).toThrow(/llama\.block_count/);
  });

  it('reads every shared and recorded fixture', async () => {
    const seen = new Set<string>();
    for (const path of [
      ...listGgufFiles('models'),
      ...listReferenceFixtures().map((f) => f.ggufPath),
      ...listEmbeddingOnlyFixtures(),
    ]) {
      const source = await NodeFileSource.open(path);
      const gguf = await parseGguf(source).finally(() => source.close());
      const c = readModelConfig(gguf);
      seen.add(c.arch);
      expect(c.vocabSize).toBeGreaterThan(0);
      if (c.arch === 'gemma3') expect(c.slidingLayers).toEqual([true, false]);
      if (c.arch === 'gemma2')
        expect(c).toMatchObject({ slidingWindow: 5, attnSoftcap: 10, finalSoftcap: 12, headDim: 64 });
      if (c.arch === 'qwen3') expect(c.headDim).toBe(64);
    }
    expect([...seen].sort()).toEqual(architectureNames().sort());
  });
});
