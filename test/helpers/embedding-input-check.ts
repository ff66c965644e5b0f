/**
 * The check behind `Transformer.evalEmbeddings` on every backend: embedding rows given instead of token ids (an
 * image's, placed in the prompt by the chat layer), causal or as one non-causal chunk (gemma3's image attention).
 * - Rows equal to the scaled token embeddings of some tokens give exactly those tokens' logits (`setRows` lands them
 *   where `embed` would, and no embedding scale is applied on top).
 * - A non-causal chunk: its first row sees the rows after it (other logits than causally), the text after it follows
 *   from that KV; every backend matches the reference there, row by row.
 * Each backend's test file calls `describeEmbeddingInput`.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { loadTransformer } from '../../src/model/load.js';
import type { Transformer } from '../../src/model/model.js';
import { dequantize } from '../../src/quant/index.js';
import { maxAbsDiff } from './compare.js';
import { mulberry32 } from './mulberry32.js';
import { sharedPath } from './shared-path.js';

const BEFORE = [1, 82, 113]; // text before the rows
const IMAGE_TOKENS = [346, 701, 265, 263]; // tokens whose scaled embeddings are the rows
const AFTER = [931, 47, 727]; // text after the rows

async function load(rel: string, ops: Ops): Promise<{ model: Transformer; table: Float32Array }> {
  const bytes = readFileSync(sharedPath('models', rel));
  const source = new MemoryByteSource(bytes, rel);
  const gguf = await parseGguf(source);
  const model = await loadTransformer(gguf, source, ops, { contextLength: 32, ubatchSize: 8 });
  const t = gguf.tensors.find((x) => x.name === 'token_embd.weight')!;
  const at = gguf.tensorDataOffset + t.offset;
  const table = dequantize(t.type, bytes.subarray(at, at + t.byteLength), t.nElements); // [vocab, nEmbd]
  return { model, table };
}

/** The rows: the scaled embeddings of IMAGE_TOKENS, plus seeded noise so that they are no token's. */
function imageRows(model: Transformer, table: Float32Array, noise: number): Float32Array {
  const { embeddingLength: d, embeddingScale: s } = model.config;
  const next = mulberry32(17);
  const rows = new Float32Array(IMAGE_TOKENS.length * d); // [nImage, nEmbd]
  IMAGE_TOKENS.forEach((id, r) => {
    for (let i = 0; i < d; i++) rows[r * d + i] = table[id * d + i] * s + noise * (next() * 2 - 1);
  });
  return rows;
}

/** Logits of every row after BEFORE, the rows (non-causal or not) and AFTER: [(nImage + nAfter), vocab]. */
async function prompt(model: Transformer, rows: Float32Array, nonCausal: boolean): Promise<Float32Array[]> {
  await model.eval(Int32Array.from(BEFORE), 0, 0, { logits: 'none' });
  const img = await model.evalEmbeddings!(rows, BEFORE.length, 0, { logits: 'all', nonCausal });
  const txt = await model.eval(Int32Array.from(AFTER), BEFORE.length + IMAGE_TOKENS.length, 0, { logits: 'all' });
  const vocab = model.config.vocabSize;
  const split = (a: Float32Array) =>
    Array.from({ length: a.length / vocab }, (_, i) => a.subarray(i * vocab, (i + 1) * vocab));
  return [...split(img!), ...split(txt!)];
}

/** `fixtures`: model files under ../shared/models; `tolerance`: max |Δ| of a logit vs the reference backend. */
export function describeEmbeddingInput(
  name: string,
  makeOps: () => Ops | Promise<Ops>,
  fixtures: readonly string[],
  tolerance: number,
): void {
  describe(`${name}: embedding rows as input (evalEmbeddings)`, () => {
    for (const rel of fixtures) {
      it(`rows equal to scaled token embeddings give those tokens' logits (${rel})`, { timeout: 120_000 }, async () => {
        const { model, table } = await load(rel, await makeOps());
        const tokens = Int32Array.from([...BEFORE, ...IMAGE_TOKENS]);
        const want = (await model.eval(tokens, 0, 0, { logits: 'all' }))!;
        await model.eval(Int32Array.from(BEFORE), 0, 0, { logits: 'none' });
        const got = (await model.evalEmbeddings!(imageRows(model, table, 0), BEFORE.length, 0, { logits: 'all' }))!;
        expect(maxAbsDiff(got, want.subarray(BEFORE.length * model.config.vocabSize))).toBeLessThan(tolerance);
        model.destroy();
      });

      it(`a non-causal chunk: rows see each other, the text after sees its KV (${rel})`, {
        timeout: 120_000,
      }, async () => {
        const { model, table } = await load(rel, await makeOps());
        const rows = imageRows(model, table, 0.5);
        const causal = await prompt(model, rows, false);
        const whole = await prompt(model, rows, true);
        const after = IMAGE_TOKENS.length;
        expect(maxAbsDiff(whole[0], causal[0])).toBeGreaterThan(20 * tolerance); // the first row sees the rows after it
        expect(maxAbsDiff(whole[after], causal[after])).toBeGreaterThan(20 * tolerance); // the text sees their KV
        const ref = await prompt((await load(rel, createCpuOps())).model, rows, true);
        for (let i = 0; i < ref.length; i++) expect(maxAbsDiff(whole[i], ref[i]), `row ${i}`).toBeLessThan(tolerance);
        model.destroy();
      });
    }
  });
}
