/**
 * Embedding conformance driver: for every recorded fixture with an embedding reference (`<id>.embeddings.json`,
 * written by the vitest global setup from test/fixtures/models), load the model on a backend, run every reference
 * input through `hiddenStates` + the model's pooling (or a reranker's classifier head: llama.cpp's `n_cls_out` outputs),
 * and compare with llama.cpp's pooled vectors: cosine ≥ 0.9999
 * and max |Δ| ≤ 1e-3 (f32 weights), both raw and after L2 normalisation.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadAnyModel } from '../../src/model/load-any.js';
import { finishEmbedding, poolHiddenStates, projectPooled, rankOutputs } from '../../src/model/pooling.js';
import { RECORDED_FIXTURE_DIR } from './shared-path.js';

/** An embedding reference (scripts/oracle/make-embedding-reference.mjs). */
interface EmbeddingReference {
  readonly pooling_type: number | null;
  readonly inputs: readonly { readonly text: string; readonly tokens: number[]; readonly embedding: number[] }[];
}

/** A recorded model with an embedding reference. */
interface EmbeddingFixture {
  readonly id: string;
  readonly ggufPath: string;
  readonly reference: EmbeddingReference;
}

/** Every regenerated fixture with an `.embeddings.json`, sorted by id. */
function listEmbeddingFixtures(): EmbeddingFixture[] {
  const names = existsSync(RECORDED_FIXTURE_DIR) ? readdirSync(RECORDED_FIXTURE_DIR) : [];
  return names
    .filter((f) => f.endsWith('.embeddings.json'))
    .sort()
    .map((f) => {
      const id = f.replace(/\.embeddings\.json$/, '');
      const reference = JSON.parse(readFileSync(join(RECORDED_FIXTURE_DIR, f), 'utf8')) as EmbeddingReference;
      return { id, ggufPath: join(RECORDED_FIXTURE_DIR, `${id}.gguf`), reference };
    });
}

/** Cosine similarity and max |Δ| of two vectors of one length. */
function compareVectors(a: ArrayLike<number>, b: ArrayLike<number>): { cosine: number; maxAbs: number } {
  let dot = 0;
  let na = 0;
  let nb = 0;
  let maxAbs = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
    maxAbs = Math.max(maxAbs, Math.abs(a[i]! - b[i]!));
  }
  return { cosine: dot / Math.sqrt(na * nb), maxAbs };
}

/** Pooled embeddings of every input of `fixture` on a fresh backend (one sequence after another in slot 0). */
async function embedFixture(fixture: EmbeddingFixture, ops: Ops, ubatchSize = 512): Promise<Float32Array[]> {
  const source = await NodeFileSource.open(fixture.ggufPath);
  try {
    const gguf = await parseGguf(source);
    const longest = Math.max(...fixture.reference.inputs.map((i) => i.tokens.length));
    const model = await loadAnyModel(gguf, source, ops, { contextLength: longest, ubatchSize });
    const out: Float32Array[] = [];
    for (const input of fixture.reference.inputs) {
      const hidden = await model.hiddenStates(Int32Array.from(input.tokens), 0);
      const d = model.config.embeddingLength;
      const n = input.tokens.length;
      const rank = model.config.poolingType === 'rank';
      out.push(
        rank
          ? rankOutputs(hidden, n, d, model.rankHead!)
          : projectPooled(poolHiddenStates(hidden, n, d, model.config.poolingType), model.pooledProjection),
      );
    }
    return out;
  } finally {
    ops.destroy();
    await source.close?.();
  }
}

/** Registers one test per embedding fixture for the backend made by `createOps` (max |Δ| limit: 1e-3 by default). */
export function runEmbeddingConformance(
  name: string,
  createOps: () => Ops | Promise<Ops>,
  options: { ubatchSize?: number; maxAbs?: number } = {},
): void {
  const maxAbs = options.maxAbs ?? 1e-3;
  const fixtures = listEmbeddingFixtures();
  describe(`embedding conformance vs llama.cpp: ${name} backend`, () => {
    it('finds the recorded embedding fixtures', () => {
      expect(fixtures.length).toBeGreaterThan(0);
    });
    for (const fixture of fixtures) {
      it(fixture.id, async () => {
        const longest = Math.max(...fixture.reference.inputs.map((i) => i.tokens.length));
        if (fixture.id.includes('noncausal') && (options.ubatchSize ?? 512) < longest) {
          // A non-causal sequence must fit one step (llama.cpp asserts the same): refused, not chunked wrongly.
          await expect(embedFixture(fixture, await createOps(), options.ubatchSize)).rejects.toThrow(
            /non-causal attention sees a sequence whole/,
          );
          return;
        }
        const got = await embedFixture(fixture, await createOps(), options.ubatchSize);
        const lines: string[] = [];
        fixture.reference.inputs.forEach((input, i) => {
          const raw = compareVectors(got[i]!, input.embedding);
          const unit = compareVectors(
            finishEmbedding(got[i]!, undefined, true),
            finishEmbedding(Float32Array.from(input.embedding), undefined, true),
          );
          lines.push(
            `[${name}] ${fixture.id} #${i} (${input.tokens.length} tokens) cos ${raw.cosine.toFixed(7)} ` +
              `max|Δ| ${raw.maxAbs.toExponential(2)} normalised ${unit.maxAbs.toExponential(2)}`,
          );
          expect(raw.cosine, lines.at(-1)).toBeGreaterThanOrEqual(0.9999);
          expect(raw.maxAbs, lines.at(-1)).toBeLessThanOrEqual(maxAbs);
          expect(unit.maxAbs, lines.at(-1)).toBeLessThanOrEqual(maxAbs);
        });
        console.log(lines.join('\n'));
      });
    }
  });
}
