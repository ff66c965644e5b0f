/**
 * Embedding conformance driver: for every recorded fixture with an embedding reference (`<id>.embeddings.json`,
 * written by the vitest global setup from test/fixtures/models), load the model on a backend, run every reference
 * input through `hiddenStates` + the model's pooling (or a reranker's classifier head: llama.cpp's `n_cls_out` outputs),
 * one at a time and — on an encoder — all packed into one pass (`model/packed-hidden.ts`),
 * and compare with llama.cpp's pooled vectors: cosine ≥ 0.9999
 * and max |Δ| ≤ 1e-3 (f32 weights), both raw and after L2 normalisation.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { type LoadedModel, loadAnyModel } from '../../src/model/load-any.js';
import { forEachHiddenStates } from '../../src/model/packed-hidden.js';
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

/** The pooled vector (or a reranker's outputs) of one input's hidden states ([n, nEmbd]). */
function pooledOf(model: LoadedModel, hidden: Float32Array, n: number): Float32Array {
  const d = model.config.embeddingLength;
  return model.config.poolingType === 'rank'
    ? rankOutputs(hidden, n, d, model.rankHead!)
    : projectPooled(poolHiddenStates(hidden, n, d, model.config.poolingType), model.pooledProjection);
}

/**
 * Pooled embeddings of every input of `fixture` on a fresh backend, one sequence after another in slot 0, and — for a
 * model that packs sequences (encoders) — again with every input packed into one pass (`forEachHiddenStates`), or
 * null for one that does not.
 */
async function embedFixture(
  fixture: EmbeddingFixture,
  ops: Ops,
  ubatchSize = 512,
): Promise<{ single: Float32Array[]; packed: Float32Array[] | null; pooledRows: Float32Array[] | null }> {
  const source = await NodeFileSource.open(fixture.ggufPath);
  try {
    const gguf = await parseGguf(source);
    const longest = Math.max(...fixture.reference.inputs.map((i) => i.tokens.length));
    const model = await loadAnyModel(gguf, source, ops, { contextLength: longest, ubatchSize });
    const single: Float32Array[] = [];
    for (const input of fixture.reference.inputs) {
      const hidden = await model.hiddenStates(Int32Array.from(input.tokens), 0);
      single.push(pooledOf(model, hidden, input.tokens.length));
    }
    if (!('hiddenStatesPacked' in model)) return { single, packed: null, pooledRows: null };
    const sequences = fixture.reference.inputs.map((i) => i.tokens);
    const packed: Float32Array[] = [];
    await forEachHiddenStates(model, sequences, 0, undefined, (i, hidden) => {
      packed[i] = pooledOf(model, hidden, sequences[i]!.length);
    });
    // cls / last pooling (and the row a rank head reads): again with the last layer run on the pooled rows alone (`pooledStates`).
    const type = model.config.poolingType;
    const head = model.rankHead;
    const pooling = type === 'rank' ? (head!.meanPool ? 'mean' : head!.lastToken ? 'last' : 'cls') : type;
    if (!model.pooledStates || (pooling !== 'cls' && pooling !== 'last')) return { single, packed, pooledRows: null };
    const pooledRows: Float32Array[] = [];
    await forEachHiddenStates(
      model,
      sequences,
      0,
      undefined,
      (i, hidden) => {
        expect(hidden.length, `${fixture.id} #${i} pooled rows`).toBe(model.config.embeddingLength);
        pooledRows[i] = pooledOf(model, hidden, 1);
      },
      pooling,
    );
    return { single, packed, pooledRows };
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
        const { single, packed, pooledRows } = await embedFixture(fixture, await createOps(), options.ubatchSize);
        const lines: string[] = [];
        for (const [label, got] of [
          ['', single],
          [' packed', packed],
          [' pooled rows', pooledRows],
        ] as const) {
          if (!got) continue;
          fixture.reference.inputs.forEach((input, i) => {
            const raw = compareVectors(got[i]!, input.embedding);
            const unit = compareVectors(
              finishEmbedding(got[i]!, undefined, true),
              finishEmbedding(Float32Array.from(input.embedding), undefined, true),
            );
            lines.push(
              `[${name}${label}] ${fixture.id} #${i} (${input.tokens.length} tokens) cos ${raw.cosine.toFixed(7)} ` +
                `max|Δ| ${raw.maxAbs.toExponential(2)} normalised ${unit.maxAbs.toExponential(2)}`,
            );
            expect(raw.cosine, lines.at(-1)).toBeGreaterThanOrEqual(0.9999);
            expect(raw.maxAbs, lines.at(-1)).toBeLessThanOrEqual(maxAbs);
            expect(unit.maxAbs, lines.at(-1)).toBeLessThanOrEqual(maxAbs);
          });
        }
        // Packed and one at a time differ only by rounding (no sequence sees another's rows).
        packed?.forEach((v, i) => {
          const d = compareVectors(v, single[i]!);
          expect(d.maxAbs, `${fixture.id} #${i} packed vs alone`).toBeLessThanOrEqual(maxAbs / 10);
        });
        pooledRows?.forEach((v, i) => {
          const d = compareVectors(v, packed![i]!);
          expect(d.maxAbs, `${fixture.id} #${i} pooled rows vs all rows`).toBeLessThanOrEqual(maxAbs / 10);
        });
        console.log(lines.join('\n'));
      });
    }
  });
}
