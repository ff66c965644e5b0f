/**
 * Recorded fixtures (scripts/synthetic/recorded-fixture.ts): a record regenerates the exact file it was made from,
 * its compact reference expands to the ../shared format, and a generator change (different bytes) fails loudly.
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  fileSha256,
  materializeRecordedFixtures,
  recordFixture,
  writeRecipe,
  type FixtureRecipe,
} from '../../../scripts/synthetic/recorded-fixture.js';
import { writeSyntheticModel } from '../../../scripts/synthetic-model.js';
import { parseReferenceJson } from '../../../src/model/conformance.js';

const dir = mkdtempSync(path.join(tmpdir(), 'webgguf-recorded-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const recipe: FixtureRecipe = {
  arch: 'smollm3',
  quant: 'q8_0',
  seed: 11,
  shape: { nEmbd: 64, nHead: 2, nHeadKv: 1, headDim: 32, nFf: 96, nLayer: 2, nVocab: 512, tied: true },
};

describe('recorded fixtures', () => {
  it('an embedding section (pooling recipe) regenerates as <id>.embeddings.json with the vectors unpacked', async () => {
    const embRecipe: FixtureRecipe = { ...recipe, pooling: 3 };
    const file = path.join(dir, 'emb.gguf');
    await writeRecipe(embRecipe, file, writeSyntheticModel);
    const inputs = [
      { text: 'a', tokens: [1, 2], embedding: [0.5, -1.25, 3] },
      { text: 'bc', tokens: [1, 3, 4], embedding: [1, 2, Math.fround(0.1)] },
    ];
    const embeddings = { pooling_type: 3, model_sha256: 'x', inputs };
    const records = path.join(dir, 'emb-records');
    await import('node:fs').then((fs) => fs.mkdirSync(records));
    writeFileSync(path.join(records, 'e.json'), recordFixture(embRecipe, fileSha256(file), { n_vocab: 1 }, embeddings));
    const out = path.join(dir, 'emb-out');
    await materializeRecordedFixtures(records, out, writeSyntheticModel);
    const expanded = JSON.parse(readFileSync(path.join(out, 'e.embeddings.json'), 'utf8')) as Record<string, unknown>;
    expect(expanded).toEqual({ pooling_type: 3, inputs });
    // The pooling recipe is part of the file: the model carries smollm3.pooling_type = 3.
    const { parseGguf } = await import('../../../src/gguf/parse.js');
    const { NodeFileSource } = await import('../../../src/io/node-file-source.js');
    const src = await NodeFileSource.open(path.join(out, 'e.gguf'));
    expect((await parseGguf(src)).metadata['smollm3.pooling_type']).toBe(3);
    await src.close?.();
  });

  it('regenerates the recorded file and expands its reference; a changed generator fails naming the record', async () => {
    const first = path.join(dir, 'first.gguf');
    await writeRecipe(recipe, first, writeSyntheticModel);
    const rows = [Array.from({ length: 512 }, (_, i) => Math.fround(i / 7)), new Array<number>(512).fill(0.5)];
    const reference = {
      eval_input: [1, 2],
      n_vocab: 512,
      logits_per_position_kv_f32: rows,
      logits_per_position_kv_f16: rows, // dropped from records
      greedy_kv_f32: { n: 1, tokens: [3] },
    };
    const records = path.join(dir, 'records');
    const out = path.join(dir, 'out');
    await import('node:fs').then((fs) => fs.mkdirSync(records));
    writeFileSync(path.join(records, 'a.json'), recordFixture(recipe, fileSha256(first), reference));
    const made = await materializeRecordedFixtures(records, out, writeSyntheticModel);
    expect(made).toEqual([path.join(out, 'a.gguf')]);
    expect(fileSha256(made[0]!)).toBe(fileSha256(first));
    const ref = parseReferenceJson(readFileSync(path.join(out, 'a.reference.json'), 'utf8'), 'a');
    expect(ref.logits_per_position_kv_f32).toEqual(rows);
    expect('logits_per_position_kv_f16' in ref).toBe(false);

    // A deleted record's model goes too (the suites would otherwise keep testing it).
    writeFileSync(path.join(out, 'gone.gguf'), 'x');
    writeFileSync(path.join(out, 'gone.reference.json'), '{}');
    await materializeRecordedFixtures(records, out, writeSyntheticModel);
    expect(readdirSync(out).sort()).toEqual(['a.gguf', 'a.reference.json']);

    // Another seed stands for a generator change: the bytes differ from the recorded sha256.
    const changed = { ...recipe, seed: 12 };
    writeFileSync(path.join(records, 'a.json'), recordFixture(changed, fileSha256(first), reference));
    rmSync(out, { recursive: true });
    await expect(materializeRecordedFixtures(records, out, writeSyntheticModel)).rejects.toThrow(
      /a\.json: the generator now makes a different file/,
    );
  });
});
