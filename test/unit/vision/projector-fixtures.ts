/**
 * The recorded llama.cpp mtmd answers of test/fixtures/vision/projectors/*.json (scripts/make-projector-reference.ts):
 * per seed image, every image chunk mtmd makes (tiles row by row, then the overview), with the mmproj regenerated
 * from its recipe and checked against the recorded hash.
 */

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MMPROJ_GENERATORS, type MmprojShape } from '../../../scripts/synthetic/mmproj-generators.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufFile } from '../../../src/gguf/types.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { sha256 } from './vision-fixtures.js';

interface RecordedChunk {
  readonly preprocessed: { ne: number[]; sha256: string; samples: [number, number][] };
  readonly nTokens: number;
  readonly nEmbd: number;
  /** Which rows `embeddings` holds (all when absent). */
  readonly rows?: number[];
  /** base64 f32 [rows.length or nTokens, nEmbd] */
  readonly embeddings: string;
}

export interface ProjectorFixture {
  readonly name: string;
  readonly projector: string;
  readonly seed: number;
  readonly shape: MmprojShape;
  readonly mmprojSha256: string;
  readonly images: readonly {
    width: number;
    height: number;
    seed: number;
    /** mtmd_tokenize refused the image (no chunks): the runtime must refuse it with an LlmError too. */
    refused?: boolean;
    chunks: RecordedChunk[];
  }[];
}

/** WEBGGUF_PROJECTOR_FIXTURES names another folder of recorded cases (a sweep's, outside the repository). */
const DIR = process.env.WEBGGUF_PROJECTOR_FIXTURES ?? 'test/fixtures/vision/projectors';

export function projectorFixtures(): ProjectorFixture[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as ProjectorFixture);
}

/** The fixture's mmproj bytes (regenerated; checked against the recorded hash) and its parsed header. */
export async function projectorMmproj(fx: ProjectorFixture): Promise<{ bytes: Uint8Array; gguf: GgufFile }> {
  const bytes = MMPROJ_GENERATORS[fx.projector](fx.seed, fx.shape);
  if (sha256(bytes) !== fx.mmprojSha256)
    throw new Error(`${fx.name}: the generator no longer makes the recorded mmproj`);
  return { bytes, gguf: await parseGguf(new MemoryByteSource(bytes)) };
}
