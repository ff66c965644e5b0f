/**
 * What the CLI image tests share (test/cli/image*.test.ts): the fixture's seeded image written as a PNG, and the
 * `eval --json` / `generate` runs with `--mmproj` and `--image` on the cpu backend, their logits after the image
 * checked against a recorded mtmd reference (test/fixtures/vision/logits-*.json).
 */

import { writeFileSync } from 'node:fs';
import { PNG } from 'pngjs';
import { expect } from 'vitest';
import { seedImage } from '../../scripts/synthetic/seed-image.mjs';
import { decodeF32 } from '../unit/vision/vision-fixtures.js';
import { maxAbsDiff } from './compare.js';
import { runCliCaptured } from './run-cli.js';

/** The parts of a recorded image-logits fixture these tests read. */
export interface ImageLogitsFixture {
  readonly image: { readonly width: number; readonly height: number; readonly seed: number };
  readonly prompt: string;
  readonly chunks: readonly {
    readonly type: string;
    readonly start: number;
    readonly n_tokens?: number;
    readonly tokens?: readonly number[];
    readonly logits_per_position?: readonly string[];
  }[];
}

/** Writes the fixture's seeded RGB image to `path` as an opaque PNG. */
export function writeSeedPng(path: string, image: ImageLogitsFixture['image']): void {
  const rgb = seedImage(image.width, image.height, image.seed);
  const png = new PNG({ width: rgb.width, height: rgb.height });
  png.data = Buffer.alloc(rgb.width * rgb.height * 4, 255);
  for (let i = 0; i < rgb.width * rgb.height; i++)
    for (let c = 0; c < 3; c++) png.data[i * 4 + c] = rgb.data[i * 3 + c]!;
  writeFileSync(path, PNG.sync.write(png));
}

/** `webgguf <command> <model> --mmproj <mmproj> --image <image> --prompt <prompt> … --backend cpu`. */
export function runWithImage(
  command: 'eval' | 'generate',
  files: { readonly model: string; readonly mmproj: string; readonly image: string },
  prompt: string,
  ...extra: string[]
): ReturnType<typeof runCliCaptured> {
  const { model, mmproj, image } = files;
  return runCliCaptured(
    command,
    model,
    '--mmproj',
    mmproj,
    '--image',
    image,
    '--prompt',
    prompt,
    ...extra,
    '--backend',
    'cpu',
  );
}

/**
 * `eval --json` of the fixture's prompt: the image lands where the reference put it, its positions predict nothing,
 * and the text after it has the reference's tokens and logits within `tol`.
 */
export async function expectEvalMatchesReference(
  files: { readonly model: string; readonly mmproj: string; readonly image: string },
  fx: ImageLogitsFixture,
  tol: number,
): Promise<void> {
  const r = await runWithImage('eval', files, fx.prompt, '--json');
  expect(r.code, r.err).toBe(0);
  const got = JSON.parse(r.out) as {
    tokens: (number | null)[];
    images: { start: number; n_tokens: number }[];
    logits: (number[] | null)[];
  };
  const image = fx.chunks.find((c) => c.type === 'image')!;
  expect(got.images).toEqual([{ start: image.start, n_tokens: image.n_tokens }]);
  expect(got.logits[image.start]).toBeNull(); // an image position predicts nothing
  expect(got.tokens[image.start]).toBeNull();
  const after = fx.chunks.find((c) => c.type === 'text' && c.start > image.start)!;
  after.logits_per_position!.forEach((ref, i) => {
    if (after.tokens) expect(got.tokens[after.start + i]).toBe(after.tokens[i]);
    expect(maxAbsDiff(got.logits[after.start + i]!, decodeF32(ref)), `position ${after.start + i}`).toBeLessThan(tol);
  });
}
