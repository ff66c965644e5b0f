/**
 * gemma3n's KV sharing needs more than 20 layers (llama.cpp fixes the first 20 as the KV layers), and a random
 * 22-layer model is too sensitive for the conformance suites' normal-path limit (llama.cpp's own quantized run and
 * its exact-math run of this model differ by ~0.9). So this model (test/fixtures/deep-models, see
 * test/helpers/deep-fixtures.ts) is compared with llama.cpp's exact-math rows only: the reference backend within the
 * suites' dequantized-F32 limit, layers 20 and 21 (both sliding) reading layer 18's KV.
 */

import { beforeAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { referenceTolerances } from '../../src/model/conformance.js';
import { checkDeepFixture, materializeDeepFixtures } from '../helpers/deep-fixtures.js';

describe('gemma3n KV sharing vs llama.cpp (22 layers)', () => {
  beforeAll(() => materializeDeepFixtures(), 120_000);

  it('layers 20 and 21 (sliding) read layer 18’s KV; logits match the exact-math rows', async () => {
    const { config, report } = await checkDeepFixture('gemma3n-q8_0-kv22-s3', createCpuOps());
    expect(config.kvSources.slice(18)).toEqual([18, 19, 18, 18]);
    expect(report.maxAbsDequantF32).not.toBeNull();
    expect(report.maxAbsDequantF32!).toBeLessThanOrEqual(referenceTolerances('quantized', 'gemma3n').dequantF32);
  }, 120_000);
});
