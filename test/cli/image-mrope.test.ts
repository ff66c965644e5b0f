/**
 * `webgguf eval|generate <model> --mmproj <file> --image <file>` on an M-RoPE model (issue #17): the random-weight
 * qwen2vl text model and Qwen2.5-VL mmproj of test/fixtures/vision/logits-qwen25vl-qwen2vl-f16.json, the same image
 * as a PNG. `eval --json` gives the logits after the image as llama.cpp's mtmd does — so the CLI hands the image's
 * grid to the model (the text after it at mtmd's M-RoPE positions) — and `generate` continues after it.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MMPROJ_GENERATORS, type MmprojShape } from '../../scripts/synthetic/mmproj-generators.js';
import { writeSyntheticModel } from '../../scripts/synthetic-model.js';
import { GgmlType } from '../../src/gguf/types.js';
import { referenceTolerances } from '../../src/model/conformance.js';
import {
  expectEvalMatchesReference,
  type ImageLogitsFixture,
  runWithImage,
  writeSeedPng,
} from '../helpers/cli-image.js';

interface Fixture extends ImageLogitsFixture {
  readonly synthetic: { arch: string; seed: number };
  readonly mmproj: { projector: string; seed: number; shape: MmprojShape };
}

const FX = JSON.parse(readFileSync('test/fixtures/vision/logits-qwen25vl-qwen2vl-f16.json', 'utf8')) as Fixture;
const dir = mkdtempSync(join(tmpdir(), 'cli-image-mrope-'));
const FILES = { model: join(dir, 'qwen2vl.gguf'), mmproj: join(dir, 'mmproj.gguf'), image: join(dir, 'image.png') };

beforeAll(async () => {
  await writeSyntheticModel({ ...FX.synthetic, quant: GgmlType.F16, out: FILES.model });
  writeFileSync(FILES.mmproj, MMPROJ_GENERATORS[FX.mmproj.projector](FX.mmproj.seed, FX.mmproj.shape));
  writeSeedPng(FILES.image, FX.image);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('CLI image input on an M-RoPE model (qwen2vl)', () => {
  it('eval --json: the logits after the image match llama.cpp mtmd', { timeout: 120_000 }, async () => {
    await expectEvalMatchesReference(FILES, FX, referenceTolerances('f16', 'qwen2vl').kvF32);
  });

  it('generate: text after the image', { timeout: 120_000 }, async () => {
    const r = await runWithImage('generate', FILES, FX.prompt, '-n', '3', '--temp', '0');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/generated 3 tokens/);
  });
});
