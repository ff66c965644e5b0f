/**
 * `webgguf eval|generate <model> --mmproj <file> --image <file> --prompt "…"` (issue #17): the image (a PNG, decoded
 * by pngjs) placed at `<__media__>`; `eval --json` gives the logits after it as llama.cpp's mtmd does (the recorded
 * test/fixtures/vision/logits-gemma3-f16.json, same image and mmproj); missing flags are a usage error.
 */

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { gemma3Mmproj } from '../../scripts/synthetic/mmproj-gemma3.js';
import {
  expectEvalMatchesReference,
  type ImageLogitsFixture,
  runWithImage,
  writeSeedPng,
} from '../helpers/cli-image.js';
import { runCliCaptured } from '../helpers/run-cli.js';
import { sharedPath } from '../helpers/shared-path.js';

const FX = JSON.parse(readFileSync('test/fixtures/vision/logits-gemma3-f16.json', 'utf8')) as ImageLogitsFixture & {
  model: string;
  mmproj: { seed: number; shape: Parameters<typeof gemma3Mmproj>[1] };
};
const dir = mkdtempSync(join(tmpdir(), 'cli-image-'));
const FILES = {
  model: sharedPath('models', FX.model),
  mmproj: join(dir, 'mmproj.gguf'),
  image: join(dir, 'image.png'),
};
writeFileSync(FILES.mmproj, gemma3Mmproj(FX.mmproj.seed, FX.mmproj.shape));
writeSeedPng(FILES.image, FX.image);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('CLI image input', () => {
  it('eval --json: the logits after the image match llama.cpp mtmd', { timeout: 120_000 }, async () => {
    await expectEvalMatchesReference(FILES, FX, 2e-2);
  });

  it('generate: text after the image; an image without --mmproj is a usage error', { timeout: 120_000 }, async () => {
    const r = await runWithImage('generate', FILES, 'Look:', '-n', '3', '--temp', '0');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/generated 3 tokens|generated \d tokens/);
    const bad = await runCliCaptured(
      'generate',
      FILES.model,
      '--image',
      FILES.image,
      '--prompt',
      'Look:',
      '--backend',
      'cpu',
    );
    expect(bad.code).not.toBe(0);
    expect(bad.err).toMatch(/--mmproj/);
  });
});
