/**
 * The recorded llama.cpp mtmd answers of test/fixtures/vision/*.json (scripts/make-vision-reference.ts; the
 * `logits-*.json` records of whole prompts belong to test/helpers/image-logits-check.ts) and the
 * mmproj and seed images regenerated from their recipes.
 */

import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Gemma3MmprojShape, gemma3Mmproj } from '../../../scripts/synthetic/mmproj-gemma3.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile } from '../../../src/gguf/types.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';

interface RecordedImage {
  readonly width: number;
  readonly height: number;
  readonly seed: number;
  readonly preprocessed: { ne: number[]; sha256: string; samples: [number, number][] };
  readonly nTokens: number;
  readonly nEmbd: number;
  /** base64 f32 [nTokens, nEmbd] */
  readonly embeddings: string;
}

export interface VisionFixture {
  readonly name: string;
  readonly seed: number;
  readonly shape: Gemma3MmprojShape;
  readonly mmprojSha256: string;
  readonly images: readonly RecordedImage[];
}

const DIR = 'test/fixtures/vision';

export function visionFixtures(): VisionFixture[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.json') && !f.startsWith('logits-'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as VisionFixture);
}

export const sha256 = (b: ArrayBufferView): string =>
  createHash('sha256')
    .update(new Uint8Array(b.buffer, b.byteOffset, b.byteLength))
    .digest('hex');

/** The fixture's mmproj bytes (regenerated; checked against the recorded hash) and its parsed header. */
export async function fixtureMmproj(fx: VisionFixture): Promise<{ bytes: Uint8Array; gguf: GgufFile }> {
  const bytes = gemma3Mmproj(fx.seed, fx.shape);
  if (sha256(bytes) !== fx.mmprojSha256)
    throw new Error(`${fx.name}: the generator no longer makes the recorded mmproj`);
  return { bytes, gguf: await parseGguf(new MemoryByteSource(bytes)) };
}

export function decodeF32(b64: string): Float32Array {
  const raw = Buffer.from(b64, 'base64');
  return new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
}
