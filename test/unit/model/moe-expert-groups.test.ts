/**
 * Grouped expert selection (issue 15, branch sweep-moe): llama.cpp reads `expert_group_count` /
 * `expert_group_used_count` for every architecture and, with more than one group, `build_moe_ffn` keeps only the
 * best groups before its top-k. This runtime routes over all experts, so such a file loaded here gave other logits
 * than llama.cpp (a qwen3moe with 128 experts in 8 groups, 2 used: max |Δ| 1.57 against llama.cpp's exact-math run).
 * It is now `unsupported-arch` naming the key on every MoE architecture; 0 and 1 groups stay plain top-k, and a group
 * count not below the expert count is `gguf-invalid` (llama.cpp asserts).
 */

import { describe, expect, it } from 'vitest';
import type { GgufValue } from '../../../src/gguf/types.js';
import { getArchitecture } from '../../../src/model/arch/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

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

const ARCHES = ['qwen3moe', 'qwen2moe', 'olmoe', 'granitemoe'] as const;

describe('expert groups (expert_group_count)', () => {
  it('more than one group is unsupported-arch naming the key, on every MoE architecture', () => {
    for (const arch of ARCHES) {
      const key = `${arch}.expert_group_count`;
      const err = thrownLlmError(() =>
        getArchitecture(arch).config(meta(arch, { [key]: 4, [`${arch}.expert_group_used_count`]: 2 })),
      );
      expect(err.code, `${arch}: ${err.message}`).toBe('unsupported-arch');
      expect(err.message).toContain(`'${key}'`);
    }
  });

  it('0 or 1 group is plain top-k over all experts', () => {
    for (const arch of ARCHES.slice(0, 3)) {
      for (const groups of [0, 1]) {
        const c = getArchitecture(arch).config(meta(arch, { [`${arch}.expert_group_count`]: groups }));
        expect(c.moe?.nExperts, arch).toBe(8);
      }
    }
  });

  it('as many groups as experts (or more) is gguf-invalid naming the key', () => {
    const err = thrownLlmError(() =>
      getArchitecture('qwen3moe').config(meta('qwen3moe', { 'qwen3moe.expert_group_count': 8 })),
    );
    expect(err.code, err.message).toBe('gguf-invalid');
    expect(err.message).toContain("'qwen3moe.expert_group_count'");
  });
});
