/**
 * gemma3n's KV sharing needs more than 20 layers (llama.cpp fixes the first 20 as the KV layers), and a random
 * 22-layer model is too sensitive for the conformance suites' normal-path limit (llama.cpp's own quantized run and
 * its exact-math run of this model differ by ~0.9). So this model (test/fixtures/deep-models, regenerated here from
 * its recipe and checked by sha256) is compared with llama.cpp's exact-math rows only: the reference backend within
 * the suites' dequantized-F32 limit, layers 20 and 21 (both sliding) reading layer 18's KV.
 */

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { materializeRecordedFixtures } from '../../scripts/synthetic/recorded-fixture.js';
import { writeSyntheticModel } from '../../scripts/synthetic-model.js';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { checkConformance, referenceTolerances } from '../../src/model/conformance.js';
import { loadTransformer } from '../../src/model/load.js';
import { loadReferenceJson } from '../helpers/reference-json.js';

const REPO = path.resolve(fileURLToPath(new URL('../../', import.meta.url)));
const OUT = path.join(REPO, '.cache', 'deep-models');
const ID = 'gemma3n-q8_0-kv22-s3';

describe('gemma3n KV sharing vs llama.cpp (22 layers)', () => {
  beforeAll(async () => {
    await materializeRecordedFixtures(path.join(REPO, 'test', 'fixtures', 'deep-models'), OUT, (o) =>
      writeSyntheticModel(o),
    );
  }, 120_000);

  it('layers 20 and 21 (sliding) read layer 18’s KV; logits match the exact-math rows', async () => {
    const source = await NodeFileSource.open(path.join(OUT, `${ID}.gguf`));
    const ops = createCpuOps();
    try {
      const gguf = await parseGguf(source);
      const ref = loadReferenceJson(path.join(OUT, `${ID}.reference.json`));
      const model = await loadTransformer(gguf, source, ops, {
        contextLength: ref.eval_input.length + (ref.greedy_kv_f32?.tokens.length ?? 0) + 1,
      });
      expect(model.config.kvSources.slice(18)).toEqual([18, 19, 18, 18]);
      const tolerances = { ...referenceTolerances('quantized', 'gemma3n'), kvF32: Number.POSITIVE_INFINITY };
      const report = await checkConformance(model, ref, { tolerances, greedy: 'near-tie' });
      expect(report.maxAbsDequantF32).not.toBeNull();
      expect(report.maxAbsDequantF32!).toBeLessThanOrEqual(tolerances.dequantF32);
    } finally {
      ops.destroy();
      await source.close?.();
    }
  }, 120_000);
});
