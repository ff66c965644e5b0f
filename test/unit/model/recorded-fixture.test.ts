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
