/**
 * Writes test/fixtures/vision/<name>.json: llama.cpp mtmd's answers (scripts/oracle/make-image-reference.mjs, the CPU
 * build of libmtmd) for a random-weight gemma3 mmproj (scripts/synthetic/mmproj-gemma3.ts) and seed images
 * (scripts/synthetic/seed-image.mjs) of several sizes and aspect ratios: per image the sha256 and a few samples of the
 * preprocessed encoder input (f32 [3, size, size]) and the full image embeddings. The recipe is in the JSON; the tests
 * regenerate the mmproj and the images from it. The text model only sizes the output (stories260K, n_embd 64).
 * Usage: node scripts/run-ts.mjs scripts/make-vision-reference.ts [outDir]
 */

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_GEMMA3_MMPROJ, type Gemma3MmprojShape, gemma3Mmproj } from './synthetic/mmproj-gemma3.js';
import { seedImage } from './synthetic/seed-image.mjs';

/** One recorded mmproj and the images run through it. */
interface VisionCase {
  readonly name: string;
  readonly seed: number;
  readonly shape: Gemma3MmprojShape;
  /** [width, height, seed] of each seed image. */
  readonly images: readonly (readonly [number, number, number])[];
}

const IMAGES: readonly (readonly [number, number, number])[] = [
  [64, 64, 1],
  [40, 25, 2],
  [97, 131, 3],
  [300, 200, 4],
  [13, 77, 5],
  [1, 1, 6],
];

const CASES: readonly VisionCase[] = [
  { name: 'gemma3-s1', seed: 1, shape: DEFAULT_GEMMA3_MMPROJ, images: IMAGES },
  {
    name: 'gemma3-p14-m2-s2',
    seed: 2,
    shape: { imageSize: 112, patchSize: 14, nEmbd: 48, nHeads: 6, nFf: 80, nLayers: 1, nEmbdText: 64, merge: 2 },
    images: [
      [112, 112, 7],
      [500, 90, 8],
      [50, 60, 9],
    ],
  },
  {
    name: 'gemma3-f16-s3',
    seed: 3,
    shape: { ...DEFAULT_GEMMA3_MMPROJ, nLayers: 3, matrices: 'f16' },
    images: [
      [64, 64, 10],
      [200, 150, 11],
    ],
  },
  {
    name: 'gemma3-preln-swapped-s4',
    seed: 4,
    shape: { ...DEFAULT_GEMMA3_MMPROJ, nFf: 40, preLn: true, swappedFfn: true },
    images: [[70, 50, 12]],
  },
];

const TEXT_MODEL = '../shared/models/stories260K.gguf';

interface OracleImage {
  nTokens: number;
  nEmbd: number;
  inpRaw: { ne: number[]; data: string };
  embeddings: string;
}

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** Entry point for scripts/run-ts.mjs. */
export function main(args: string[]): number {
  const outDir = resolve(args[0] ?? 'test/fixtures/vision');
  const tmp = mkdtempSync(join(tmpdir(), 'vision-ref-'));
  try {
    mkdirSync(outDir, { recursive: true });
    for (const c of CASES) {
      const mmproj = gemma3Mmproj(c.seed, c.shape);
      const mmprojFile = join(tmp, `${c.name}.mmproj.gguf`);
      writeFileSync(mmprojFile, mmproj);
      const images = c.images.map(([w, h, s], i) => {
        const rgbFile = join(tmp, `${c.name}-${i}.rgb`);
        writeFileSync(rgbFile, seedImage(w, h, s).data);
        return { width: w, height: h, rgbFile };
      });
      const job = { mmproj: mmprojFile, textModel: resolve(TEXT_MODEL), nEmbdText: c.shape.nEmbdText, images };
      writeFileSync(join(tmp, 'job.json'), JSON.stringify(job));
      const r = spawnSync(
        process.execPath,
        ['make-image-reference.mjs', join(tmp, 'job.json'), join(tmp, 'out.json')],
        {
          cwd: 'scripts/oracle',
          stdio: ['ignore', 'ignore', 'inherit'],
        },
      );
      if (r.status !== 0) {
        console.error('the oracle failed (is scripts/oracle installed and LLCPP_BIN a CPU build of libmtmd?)');
        return 1;
      }
      const results = JSON.parse(readFileSync(join(tmp, 'out.json'), 'utf8')) as OracleImage[];
      const doc = {
        about:
          'llama.cpp mtmd (CPU build, flash attention off, 1 thread) on a synthetic gemma3 mmproj and seed images; regenerate with scripts/make-vision-reference.ts',
        name: c.name,
        seed: c.seed,
        shape: c.shape,
        mmprojSha256: sha256(mmproj),
        images: c.images.map(([width, height, seed], i) => {
          const raw = Buffer.from(results[i].inpRaw.data, 'base64');
          const f = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
          const picks = [0, 1, Math.floor(f.length / 3), Math.floor(f.length / 2), f.length - 1];
          return {
            width,
            height,
            seed,
            preprocessed: {
              ne: results[i].inpRaw.ne,
              sha256: sha256(raw),
              samples: picks.map((j) => [j, f[j]]),
            },
            nTokens: results[i].nTokens,
            nEmbd: results[i].nEmbd,
            embeddings: results[i].embeddings,
          };
        }),
      };
      writeFileSync(join(outDir, `${c.name}.json`), `${JSON.stringify(doc, null, 1)}\n`);
      console.log(`${c.name}: ${c.images.length} images, mmproj sha256 ${doc.mmprojSha256.slice(0, 16)}…`);
    }
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
