/**
 * Recorded models kept out of the conformance suites (test/fixtures/deep-models: too deep for their normal-path
 * limit, see test/reference/gemma3n-kv-sharing.test.ts): regenerated from their recipes (sha256-checked) into
 * .cache/deep-models and compared with llama.cpp's exact-math rows only.
 */

import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { materializeRecordedFixtures } from '../../scripts/synthetic/recorded-fixture.js';
import { writeSyntheticModel } from '../../scripts/synthetic-model.js';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { checkConformance, type ConformanceReport, referenceTolerances } from '../../src/model/conformance.js';
import { loadTransformer } from '../../src/model/load.js';
import type { ModelConfig } from '../../src/model/config.js';
import { loadReferenceJson } from './reference-json.js';

const REPO = path.resolve(fileURLToPath(new URL('../../', import.meta.url)));
const OUT = path.join(REPO, '.cache', 'deep-models');

/** Writes every deep model and its reference into .cache/deep-models (once per file content). */
export async function materializeDeepFixtures(): Promise<void> {
  await materializeRecordedFixtures(path.join(REPO, 'test', 'fixtures', 'deep-models'), OUT, (o) =>
    writeSyntheticModel(o),
  );
}

/** Loads deep model `id` on `ops` (destroyed afterwards) and compares it with the reference's exact-math rows. */
export async function checkDeepFixture(
  id: string,
  ops: Ops,
): Promise<{ config: ModelConfig; report: ConformanceReport }> {
  const source = await NodeFileSource.open(path.join(OUT, `${id}.gguf`));
  try {
    const gguf = await parseGguf(source);
    const ref = loadReferenceJson(path.join(OUT, `${id}.reference.json`));
    const model = await loadTransformer(gguf, source, ops, {
      contextLength: ref.eval_input.length + (ref.greedy_kv_f32?.tokens.length ?? 0) + 1,
    });
    const tolerances = { ...referenceTolerances('quantized', model.config.arch), kvF32: Number.POSITIVE_INFINITY };
    const report = await checkConformance(model, ref, { tolerances, greedy: 'near-tie' });
    return { config: model.config, report };
  } finally {
    ops.destroy();
    await source.close?.();
  }
}
