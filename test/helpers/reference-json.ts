/**
 * Loads llama.cpp reference files (`*.reference.json`) and lists the fixtures that have one: every `*.gguf` under
 * ../shared/models with a `<stem>.reference.json` beside it. Parsing and validation live in src/model/conformance.ts.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { referencePathFor } from '../../src/cli/model-file.js';
import { parseReferenceJson, type ReferenceJson } from '../../src/model/conformance.js';
import { listGgufFiles, RECORDED_FIXTURE_DIR, sharedPath } from './shared-path.js';

export type { ReferenceJson } from '../../src/model/conformance.js';

/** A model fixture with its reference. */
export interface ReferenceFixture {
  /** Path relative to shared/models, e.g. 'arch/gemma2-f16.gguf'; 'recorded/<id>.gguf' for test/fixtures/models. */
  readonly id: string;
  readonly ggufPath: string;
  readonly referencePath: string;
  /** Greedy tokens must match exactly (stories260K and models/derived); others up to a near-tie (random weights). */
  readonly requireGreedy: boolean;
}

/**
 * Every GGUF under shared/models that has a reference JSON, sorted by id, then the recorded fixtures the vitest global
 * setup regenerated from test/fixtures/models (test/setup/recorded-fixtures.ts).
 */
export function listReferenceFixtures(): ReferenceFixture[] {
  const root = sharedPath('models');
  const out: ReferenceFixture[] = [];
  for (const ggufPath of listGgufFiles('models')) {
    const referencePath = referencePathFor(ggufPath);
    if (!referencePath) continue;
    const id = relative(root, ggufPath);
    out.push({ id, ggufPath, referencePath, requireGreedy: id === 'stories260K.gguf' || id.startsWith('derived/') });
  }
  const recorded = existsSync(RECORDED_FIXTURE_DIR) ? readdirSync(RECORDED_FIXTURE_DIR) : [];
  for (const name of recorded.filter((f) => f.endsWith('.gguf')).sort()) {
    const ggufPath = join(RECORDED_FIXTURE_DIR, name);
    const referencePath = referencePathFor(ggufPath);
    if (referencePath) out.push({ id: `recorded/${name}`, ggufPath, referencePath, requireGreedy: false });
  }
  return out;
}

/**
 * The recorded fixtures whose llama.cpp reference is embeddings alone (encoders: no lm head, so no logits
 * reference), as GGUF paths: `<id>.embeddings.json` beside the model and no `<id>.reference.json`.
 */
export function listEmbeddingOnlyFixtures(): string[] {
  const recorded = existsSync(RECORDED_FIXTURE_DIR) ? readdirSync(RECORDED_FIXTURE_DIR) : [];
  return recorded
    .filter((f) => f.endsWith('.gguf'))
    .map((f) => join(RECORDED_FIXTURE_DIR, f))
    .filter((p) => existsSync(p.replace(/\.gguf$/, '.embeddings.json')) && !referencePathFor(p))
    .sort();
}

/** Reads and validates one reference file. */
export function loadReferenceJson(path: string): ReferenceJson {
  return parseReferenceJson(readFileSync(path, 'utf8'), path);
}
