/**
 * The benchmark shapes of the architectures whose synthetic models are written from a spec (not from a template GGUF):
 * their architecture, dimensions and embedding type, looked up by `--shape` in the fixture tool and the bench.
 */

import { GgmlType } from '../../src/gguf/types.js';
import type { ModelShape } from './arch-plan.js';

/**
 * Benchmark shapes of architectures written from scratch: a Qwen3-30B-A3B scaled down to 1.03 B parameters of which
 * 0.15 B are active (64 experts, top-8, expert width 512, 10 layers; the spec tokenizer's 512-token vocabulary), and a dense model with the same active bytes
 * (its FFN 8 × 512 wide; smollm3 is llama's block) to compare MoE decode with, and a gpt-oss-20b-shaped one (MXFP4
 * experts with `--quant mxfp4`; token embedding and output Q8_0).
 */
export const SPEC_BENCH_SHAPES = {
  'qwen3moe-a0.2b': {
    arch: 'qwen3moe',
    shape: {
      nEmbd: 1024,
      nHead: 16,
      nHeadKv: 4,
      headDim: 64,
      nFf: 4096,
      nLayer: 10,
      nVocab: 512,
      tied: false,
      extra: { n_expert: 64, n_expert_used: 8, n_ff_exp: 512 },
    },
  },
  'dense-a0.2b': {
    arch: 'smollm3',
    shape: { nEmbd: 1024, nHead: 16, nHeadKv: 4, headDim: 64, nFf: 4096, nLayer: 10, nVocab: 512, tied: false },
  },
  // gpt-oss-20b scaled down: 32 experts, top-4, GQA 8, head 64, window 128 on even layers; 1.24 B total, 0.18 B active.
  'gpt-oss-a0.2b': {
    arch: 'gpt-oss',
    shape: {
      nEmbd: 1024,
      nHead: 16,
      nHeadKv: 2,
      headDim: 64,
      nFf: 4096,
      nLayer: 12,
      nVocab: 512,
      tied: false,
      extra: { n_expert: 32, n_expert_used: 4, n_ff_exp: 1024, window: 128 },
    },
    embedType: GgmlType.Q8_0,
  },
} as const satisfies Record<string, { arch: string; shape: Partial<ModelShape>; embedType?: GgmlType }>;

/** A benchmark shape of `SPEC_BENCH_SHAPES`. */
export type SpecBenchShape = keyof typeof SPEC_BENCH_SHAPES;
