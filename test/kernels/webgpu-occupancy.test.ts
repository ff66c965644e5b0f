/**
 * Occupancy of the hardware decode GEMV (issue 23), computed from the kernel's grid without a GPU: every matmul of the
 * Qwen2.5-0.5B, Llama-3.2-1B and 3B shapes (Q4_0 layers, Q8_0 output) launches ≥ 4 subgroups (32 lanes) per MiB of
 * weights, so memory-bound GEMVs keep a GPU's memory system busy. The 0.5B and 1B figures are also measured by
 * `webgguf profile` (BENCHMARKS.md); this covers the shapes too big to profile here.
 */

import { describe, expect, it } from 'vitest';
import { GEMV_SG_ROWS, gemvSgWorkgroupSize } from '../../src/backend/webgpu/gemv-sg-params.js';
import { gemvShape } from '../../src/backend/webgpu/gemv-shape.js';
import { PROFILE_SUBGROUP_WIDTH } from '../../src/backend/webgpu/profile.js';

interface Shape {
  readonly nEmbd: number;
  readonly nHead: number;
  readonly nHeadKv: number;
  readonly headDim: number;
  readonly nFf: number;
  readonly nVocab: number;
}

const SHAPES: Readonly<Record<string, Shape>> = {
  'qwen2.5-0.5b': { nEmbd: 896, nHead: 14, nHeadKv: 2, headDim: 64, nFf: 4864, nVocab: 151936 },
  'llama-3.2-1b': { nEmbd: 2048, nHead: 32, nHeadKv: 8, headDim: 64, nFf: 8192, nVocab: 128256 },
  'qwen2.5-3b': { nEmbd: 2048, nHead: 16, nHeadKv: 2, headDim: 128, nFf: 11008, nVocab: 151936 },
  'llama-3.2-3b': { nEmbd: 3072, nHead: 24, nHeadKv: 8, headDim: 128, nFf: 8192, nVocab: 128256 },
};

/** GGUF bytes per element: Q4_0 18 B / 32, Q8_0 34 B / 32. */
const Q4_0 = 18 / 32;
const Q8_0 = 34 / 32;

/** Subgroups per MiB of one gemv_sg dispatch over `rows` output rows of length `k` reading `bytes` of weights. */
function subgroupsPerMiB(rows: number, k: number, bytes: number): number {
  const workgroups = Math.ceil(rows / GEMV_SG_ROWS);
  return (workgroups * Math.max(1, gemvSgWorkgroupSize(rows, k) / PROFILE_SUBGROUP_WIDTH)) / (bytes / 2 ** 20);
}

describe('hardware GEMV occupancy', () => {
  for (const [name, s] of Object.entries(SHAPES)) {
    it(`${name}: ≥ 4 subgroups per MiB for every decode matmul`, () => {
      const qkvRows = (s.nHead + 2 * s.nHeadKv) * s.headDim;
      const matmuls: [string, number, number, number][] = [
        ['q|k|v', qkvRows, s.nEmbd, Q4_0],
        ['wo', s.nEmbd, s.nHead * s.headDim, Q4_0],
        ['gate·up', s.nFf, s.nEmbd, 2 * Q4_0],
        ['down', s.nEmbd, s.nFf, Q4_0],
        ['output', s.nVocab, s.nEmbd, Q8_0],
      ];
      for (const [m, rows, k, perElement] of matmuls)
        expect(subgroupsPerMiB(rows, k, rows * k * perElement), m).toBeGreaterThanOrEqual(4);
    });
  }
});

/**
 * The same for gemv, the hardware GEMV without subgroups (Firefox, Safari): its workgroups (64 invocations, the
 * host's split from gemv-shape.ts) per MiB of weights, counted as 64-lane workgroups (two 32-wide subgroups each).
 */
describe('hardware GEMV without subgroups (gemv): occupancy', () => {
  for (const [name, s] of Object.entries(SHAPES)) {
    it(`${name}: ≥ 4 workgroups of 64 lanes per MiB for every decode matmul`, () => {
      const qkvRows = (s.nHead + 2 * s.nHeadKv) * s.headDim;
      const matmuls: [string, number, number, number][] = [
        ['q|k|v', qkvRows, s.nEmbd, Q4_0],
        ['k alone', s.nHeadKv * s.headDim, s.nEmbd, Q4_0],
        ['wo', s.nEmbd, s.nHead * s.headDim, Q4_0],
        ['gate·up', s.nFf, s.nEmbd, 2 * Q4_0],
        ['down', s.nEmbd, s.nFf, Q4_0],
        ['output', s.nVocab, s.nEmbd, Q8_0],
      ];
      for (const [m, rows, k, perElement] of matmuls) {
        const workgroups = Math.ceil(rows / gemvShape(rows, k, 4).rows);
        expect(workgroups / ((rows * k * perElement) / 2 ** 20), m).toBeGreaterThanOrEqual(4);
      }
    });
  }
});
