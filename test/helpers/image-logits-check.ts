/**
 * Conformance of a prompt holding an image with llama.cpp's mtmd (test/fixtures/vision/logits-*.json, recorded by
 * scripts/make-image-logits.ts): the encoder's embeddings (computed on the backend under test where it runs the
 * projector) within 1e-3 relative, the prompt's chunks as mtmd tokenizes them (BOS, text, the projector's begin/end
 * text or tile markers, each image chunk's positions), and — each image chunk's rows evaluated whole (non-causally
 * where mtmd does) — the logits of the text after it within the suite's F32-KV tolerance for the model's weights.
 * Each backend's test file calls `describeImageLogits`.
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MMPROJ_GENERATORS, type MmprojShape } from '../../scripts/synthetic/mmproj-generators.js';
import { retokenModel } from '../../scripts/synthetic/retoken-model.js';
import { seedImage } from '../../scripts/synthetic/seed-image.mjs';
import { writeSyntheticModel } from '../../scripts/synthetic-model.js';
import { GgmlType } from '../../src/gguf/types.js';
import { imagePrompt } from '../../src/api/image-parts.js';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { referenceTolerances } from '../../src/model/conformance.js';
import { loadTransformer } from '../../src/model/load.js';
import { createTokenizer } from '../../src/tokenizer/index.js';
import { loadVisionEncoder } from '../../src/vision/vision-encoder.js';
import { vitOpsRuns } from '../../src/vision/vit-ops.js';
import { maxAbsDiff } from './compare.js';
import { sharedPath } from './shared-path.js';
import { decodeF32, sha256 } from '../unit/vision/vision-fixtures.js';

type Chunk =
  | { type: 'text'; start: number; tokens: number[]; logits_per_position?: string[] }
  | { type: 'image'; start: number; n_tokens: number; non_causal: boolean; image_embeddings: string };

interface ImageLogitsFixture {
  readonly name: string;
  readonly model: string;
  readonly model_sha256: string;
  /** A random-weight F16 text model of the fixture tool instead of a shared file. */
  readonly synthetic?: { arch: string; seed: number };
  /** Vocabulary entries renamed in the model (the projector's marker tokens). */
  readonly vocab_edits?: [number, string][];
  readonly mmproj: { projector?: string; seed: number; shape: MmprojShape; sha256: string };
  readonly image: { width: number; height: number; seed: number };
  readonly prompt: string;
  readonly n_vocab: number;
  readonly chunks: Chunk[];
}

const DIR = 'test/fixtures/vision';
const fixtures = (): ImageLogitsFixture[] =>
  readdirSync(DIR)
    .filter((f) => f.startsWith('logits-') && f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as ImageLogitsFixture);

/** The bytes of a random-weight F16 text model written by the fixture tool. */
async function syntheticModel(recipe: { arch: string; seed: number }): Promise<Uint8Array> {
  const dir = mkdtempSync(join(tmpdir(), 'image-logits-'));
  try {
    const out = join(dir, 'model.gguf');
    await writeSyntheticModel({ ...recipe, quant: GgmlType.F16, out });
    return readFileSync(out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** max |a − b| / max |b|. */
function relDiff(a: Float32Array, b: Float32Array): number {
  let ref = 0;
  for (const v of b) ref = Math.max(ref, Math.abs(v));
  return maxAbsDiff(a, b) / ref;
}

/** `extra`: what the backend adds to the reference F32-KV logit tolerance (its own activation rounding). */
export function describeImageLogits(name: string, makeOps: () => Ops | Promise<Ops>, extra: number): void {
  describe(`${name}: a prompt holding an image vs llama.cpp mtmd`, () => {
    for (const fx of fixtures()) {
      it(`embeddings, chunks and the logits after the image (${fx.name})`, { timeout: 300_000 }, async () => {
        const mmproj = MMPROJ_GENERATORS[fx.mmproj.projector ?? 'gemma3'](fx.mmproj.seed, fx.mmproj.shape);
        expect(sha256(mmproj), 'the generator no longer makes the recorded mmproj').toBe(fx.mmproj.sha256);
        let bytes: Uint8Array = fx.synthetic
          ? await syntheticModel(fx.synthetic)
          : readFileSync(sharedPath('models', fx.model));
        if (fx.vocab_edits) bytes = await retokenModel(bytes, fx.vocab_edits);
        expect(sha256(bytes), 'the model is not the one recorded').toBe(fx.model_sha256);
        const source = new MemoryByteSource(bytes, fx.model);
        const gguf = await parseGguf(source);
        // A non-causal image chunk runs as one step: the step holds the largest (gemma4v: 80 rows).
        const wholeRows = fx.chunks.map((c) => (c.type === 'image' && c.non_causal ? c.n_tokens : 0));
        const ubatchSize = Math.max(32, ...wholeRows);
        const positions = fx.chunks.reduce((t, c) => t + (c.type === 'image' ? c.n_tokens : c.tokens.length), 0);
        const contextLength = Math.max(128, positions); // ldp: 144 image rows
        const model = await loadTransformer(gguf, source, await makeOps(), { contextLength, ubatchSize });
        // The encoder on a backend of the same kind (src/vision/vit-ops.ts, where it runs the projector), as createEngine does.
        const vision = await loadVisionEncoder(
          new MemoryByteSource(mmproj),
          model.config.embeddingLength,
          undefined,
          await makeOps(),
        );
        expect(vision.backend).toBe(vitOpsRuns(vision.config) ? model.ops.name : 'reference');
        const images = fx.chunks.flatMap((c) => (c.type === 'image' ? [c] : []));
        const encoded = await vision.encode(seedImage(fx.image.width, fx.image.height, fx.image.seed));
        const rows = encoded.parts.flatMap((p) => (p.type === 'rows' ? [p] : []));
        expect(rows.map((r) => r.nTokens)).toEqual(images.map((c) => c.n_tokens));
        rows.forEach((r, k) => {
          expect(relDiff(r.embeddings, decodeF32(images[k].image_embeddings))).toBeLessThan(1e-3);
        });

        // The chunks as mtmd tokenizes them: BOS + text, the image's parts (begin/end text, tile markers, its
        // image chunks), the text after it.
        const tk = createTokenizer(gguf.metadata);
        const ours = imagePrompt(tk, fx.prompt, tk.bosId === null ? [] : [tk.bosId], [encoded], vision.config);
        const theirs = fx.chunks.flatMap((c) => (c.type === 'text' ? c.tokens : Array<number>(c.n_tokens).fill(-1)));
        expect(ours.tokens.map((t) => (t < 0 ? -1 : t))).toEqual(theirs);
        expect(ours.images.map((im) => [im.start, im.nonCausal])).toEqual(images.map((c) => [c.start, c.non_causal]));

        // The prompt evaluated chunk by chunk; the logits after the image vs llama.cpp's (F32 KV).
        const tol = referenceTolerances('f16', model.config.arch).kvF32 + extra;
        let worst = 0;
        let k = 0;
        for (const c of fx.chunks) {
          if (c.type === 'image') {
            const { embeddings, grid } = rows[k++]!; // grid: M-RoPE text models place the rows by it
            const options = { nonCausal: c.non_causal, logits: 'none', ...(grid ? { grid } : {}) } as const;
            await model.evalEmbeddings!(embeddings, c.start, 0, options);
            continue;
          }
          const logits = (await model.eval(Int32Array.from(c.tokens), c.start, 0, { logits: 'all' }))!;
          (c.logits_per_position ?? []).forEach((ref, i) => {
            const got = logits.subarray(i * fx.n_vocab, (i + 1) * fx.n_vocab);
            worst = Math.max(worst, maxAbsDiff(got, decodeF32(ref)));
          });
        }
        console.log(`[image-logits] ${name} ${fx.name}: max |Δlogit| ${worst.toExponential(2)} (limit ${tol})`);
        expect(worst).toBeLessThan(tol);
        model.destroy();
        vision.destroy();
      });
    }
  });
}
