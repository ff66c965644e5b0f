/**
 * `webgguf eval|generate <model> --mmproj <file> --image <file> --prompt "…"` (issue #17): the image (a PNG, decoded
 * by pngjs) placed at `<__media__>`; `eval --json` gives the logits after it as llama.cpp's mtmd does (the recorded
 * test/fixtures/vision/logits-gemma3-f16.json, same image and mmproj); missing flags are a usage error.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PNG } from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { gemma3Mmproj } from '../../scripts/synthetic/mmproj-gemma3.js';
import { seedImage } from '../../scripts/synthetic/seed-image.mjs';
import { maxAbsDiff } from '../helpers/compare.js';
import { runCliCaptured } from '../helpers/run-cli.js';
import { sharedPath } from '../helpers/shared-path.js';
import { decodeF32 } from '../unit/vision/vision-fixtures.js';

const FX = JSON.parse(readFileSync('test/fixtures/vision/logits-gemma3-f16.json', 'utf8'));
const MODEL = sharedPath('models', FX.model);
const dir = mkdtempSync(join(tmpdir(), 'cli-image-'));
const MMPROJ = join(dir, 'mmproj.gguf');
const IMAGE = join(dir, 'image.png');
writeFileSync(MMPROJ, gemma3Mmproj(FX.mmproj.seed, FX.mmproj.shape));
const rgb = seedImage(FX.image.width, FX.image.height, FX.image.seed);
const png = new PNG({ width: rgb.width, height: rgb.height });
png.data = Buffer.alloc(rgb.width * rgb.height * 4, 255);
for (let i = 0; i < rgb.width * rgb.height; i++) for (let c = 0; c < 3; c++) png.data[i * 4 + c] = rgb.data[i * 3 + c];
writeFileSync(IMAGE, PNG.sync.write(png));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('CLI image input', () => {
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
    const got = JSON.parse(r.out) as {
      tokens: (number | null)[];
      images: { start: number; n_tokens: number }[];
      logits: (number[] | null)[];
    };
    const image = FX.chunks.find((c: { type: string }) => c.type === 'image');
    expect(got.images).toEqual([{ start: image.start, n_tokens: image.n_tokens }]);
    expect(got.logits[image.start]).toBeNull(); // an image position predicts nothing
    expect(got.tokens[image.start]).toBeNull();
    const after = FX.chunks.find((c: { type: string; start: number }) => c.type === 'text' && c.start > image.start);
    after.logits_per_position.forEach((ref: string, i: number) => {
      expect(got.tokens[after.start + i]).toBe(after.tokens[i]);
      expect(maxAbsDiff(got.logits[after.start + i]!, decodeF32(ref))).toBeLessThan(2e-2);
    });
  });

  it('generate: text after the image; an image without --mmproj is a usage error', { timeout: 120_000 }, async () => {
    const r = await runCliCaptured(
      'generate',
      MODEL,
      '--mmproj',
      MMPROJ,
      '--image',
      IMAGE,
      '--prompt',
      'Look:',
      '-n',
      '3',
      '--temp',
      '0',
      '--backend',
      'cpu',
    );
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/generated 3 tokens|generated \d tokens/);
    const bad = await runCliCaptured('generate', MODEL, '--image', IMAGE, '--prompt', 'Look:', '--backend', 'cpu');
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/--mmproj/);
  });
});
