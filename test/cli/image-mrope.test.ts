/**
 * `webgguf eval|generate <model> --mmproj <file> --image <file>` on an M-RoPE model (issue #17): the random-weight
 * qwen2vl text model and Qwen2.5-VL mmproj of test/fixtures/vision/logits-qwen25vl-qwen2vl-f16.json, the same image
 * as a PNG. `eval --json` gives the logits after the image as llama.cpp's mtmd does — so the CLI hands the image's
 * grid to the model (the text after it at mtmd's M-RoPE positions) — and `generate` continues after it.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MMPROJ_GENERATORS, type MmprojShape } from '../../scripts/synthetic/mmproj-generators.js';
import { seedImage } from '../../scripts/synthetic/seed-image.mjs';
import { writeSyntheticModel } from '../../scripts/synthetic-model.js';
import { GgmlType } from '../../src/gguf/types.js';
import { referenceTolerances } from '../../src/model/conformance.js';
import { maxAbsDiff } from '../helpers/compare.js';
import { runCliCaptured } from '../helpers/run-cli.js';
import { decodeF32 } from '../unit/vision/vision-fixtures.js';

interface Fixture {
  readonly synthetic: { arch: string; seed: number };
  readonly mmproj: { projector: string; seed: number; shape: MmprojShape };
  readonly image: { width: number; height: number; seed: number };
  readonly prompt: string;
  readonly chunks: {
    type: string;
    start: number;
    n_tokens?: number;
    tokens?: number[];
    logits_per_position?: string[];
  }[];
}

const FX = JSON.parse(readFileSync('test/fixtures/vision/logits-qwen25vl-qwen2vl-f16.json', 'utf8')) as Fixture;
const dir = mkdtempSync(join(tmpdir(), 'cli-image-mrope-'));
const MODEL = join(dir, 'qwen2vl.gguf');
const MMPROJ = join(dir, 'mmproj.gguf');
const IMAGE = join(dir, 'image.png');

beforeAll(async () => {
  await writeSyntheticModel({ ...FX.synthetic, quant: GgmlType.F16, out: MODEL });
  writeFileSync(MMPROJ, MMPROJ_GENERATORS[FX.mmproj.projector](FX.mmproj.seed, FX.mmproj.shape));
  const rgb = seedImage(FX.image.width, FX.image.height, FX.image.seed);
  const png = new PNG({ width: rgb.width, height: rgb.height });
  png.data = Buffer.alloc(rgb.width * rgb.height * 4, 255);
  for (let i = 0; i < rgb.width * rgb.height; i++)
    for (let c = 0; c < 3; c++) png.data[i * 4 + c] = rgb.data[i * 3 + c];
  writeFileSync(IMAGE, PNG.sync.write(png));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('CLI image input on an M-RoPE model (qwen2vl)', () => {
  it('eval --json: the logits after the image match llama.cpp mtmd', { timeout: 120_000 }, async () => {
    const r = await runCliCaptured(
      'eval',
      MODEL,
      '--mmproj',
      MMPROJ,
      '--image',
      IMAGE,
      '--prompt',
      FX.prompt,
      '--json',
      '--backend',
      'cpu',
    );
    expect(r.code, r.err).toBe(0);
    const got = JSON.parse(r.out) as { images: { start: number; n_tokens: number }[]; logits: (number[] | null)[] };
    const image = FX.chunks.find((c) => c.type === 'image')!;
    expect(got.images).toEqual([{ start: image.start, n_tokens: image.n_tokens }]);
    const after = FX.chunks.find((c) => c.type === 'text' && c.start > image.start)!;
    const tol = referenceTolerances('f16', 'qwen2vl').kvF32;
    after.logits_per_position!.forEach((ref, i) => {
      expect(maxAbsDiff(got.logits[after.start + i]!, decodeF32(ref)), `position ${after.start + i}`).toBeLessThan(tol);
    });
  });

  it('generate: text after the image', { timeout: 120_000 }, async () => {
    const r = await runCliCaptured(
      'generate',
      MODEL,
      '--mmproj',
      MMPROJ,
      '--image',
      IMAGE,
      '--prompt',
      FX.prompt,
      '-n',
      '3',
      '--temp',
      '0',
      '--backend',
      'cpu',
    );
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/generated 3 tokens/);
  });
});
