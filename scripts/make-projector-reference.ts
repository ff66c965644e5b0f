/**
 * Writes test/fixtures/vision/projectors/<name>.json: llama.cpp mtmd's answers (scripts/oracle/make-image-reference.mjs,
 * the CPU build of libmtmd) for random-weight mmproj files of the projectors beyond gemma3
 * (scripts/synthetic/mmproj-generators.ts) and seed images of several sizes and aspect ratios: per image, every image
 * chunk mtmd makes of it (the tiles row by row, then the overview) with the sha256 and a few samples of its
 * preprocessed encoder input and its embeddings (of a chunk over 16 tokens, 16 evenly spaced rows, listed in `rows`). The tests regenerate the mmproj and the images from the recipe.
 * Usage: node scripts/run-ts.mjs scripts/make-projector-reference.ts [outDir] [case-name prefix]
 * PROJECTOR_CASES=<file.json> records the cases listed in that file (same fields as `CASES`) instead: sweeps of
 * variants kept out of the repository.
 */

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MMPROJ_GENERATORS, type MmprojShape } from './synthetic/mmproj-generators.js';
import { DEFAULT_GEMMA3_MMPROJ } from './synthetic/mmproj-gemma3.js';
import { DEFAULT_IDEFICS3_MMPROJ } from './synthetic/mmproj-idefics3.js';
import { DEFAULT_LDP_MMPROJ } from './synthetic/mmproj-ldp.js';
import { DEFAULT_LFM2_MMPROJ } from './synthetic/mmproj-lfm2.js';
import { DEFAULT_MLP_MMPROJ } from './synthetic/mmproj-mlp.js';
import { DEFAULT_GEMMA4V_MMPROJ } from './synthetic/mmproj-gemma4v.js';
import { DEFAULT_PIXTRAL_MMPROJ } from './synthetic/mmproj-pixtral.js';
import { DEFAULT_QWEN25VL_MMPROJ } from './synthetic/mmproj-qwen25vl.js';
import { DEFAULT_QWEN3VL_MMPROJ } from './synthetic/mmproj-qwen3vl.js';
import { seedImage } from './synthetic/seed-image.mjs';

interface ProjectorCase {
  readonly name: string;
  readonly projector: string;
  readonly seed: number;
  readonly shape: MmprojShape;
  /** [width, height, seed] of each seed image. */
  readonly images: readonly (readonly [number, number, number])[];
}

const CASES: readonly ProjectorCase[] = [
  {
    name: 'idefics3-s1',
    projector: 'idefics3',
    seed: 1,
    shape: DEFAULT_IDEFICS3_MMPROJ,
    images: [
      [80, 80, 1],
      [100, 40, 2],
      [40, 100, 3],
      [300, 200, 4],
      [13, 77, 5],
      [1, 1, 6],
      [33, 31, 7],
    ],
  },
  {
    name: 'idefics3-p14-f16-s2',
    projector: 'idefics3',
    seed: 2,
    shape: {
      imageSize: 56,
      patchSize: 14,
      nEmbd: 48,
      nHeads: 6,
      nFf: 80,
      nLayers: 1,
      nEmbdText: 64,
      merge: 2,
      longestEdge: 112,
      matrices: 'f16',
    },
    images: [
      [112, 112, 8],
      [500, 90, 9],
      [50, 60, 10],
    ],
  },
  {
    // Optional tensors absent (clip.cpp applies each only when present): block biases, patch bias, post-LN.
    name: 'gemma3-optional-tensors-s6',
    projector: 'gemma3',
    seed: 6,
    shape: {
      ...DEFAULT_GEMMA3_MMPROJ,
      omit: ['v\\.blk\\.\\d+\\.(attn_(q|k|v|out)|ffn_(up|down))\\.bias', 'v\\.post_ln\\..*', 'v\\.patch_embd\\.bias'],
    },
    images: [
      [50, 40, 201],
      [64, 64, 202],
    ],
  },
  {
    name: 'idefics3-extreme-s3',
    projector: 'idefics3',
    seed: 3,
    shape: { ...DEFAULT_IDEFICS3_MMPROJ, nLayers: 1 },
    images: [
      [3, 1000, 111], // the short side truncates to 0 at the longest edge: mtmd refuses the image
      [1000, 3, 112],
      [161, 17, 119], // 2 pixels short side → one row of tiles
    ],
  },
  {
    name: 'lfm2-s1',
    projector: 'lfm2',
    seed: 1,
    shape: DEFAULT_LFM2_MMPROJ,
    images: [
      [64, 64, 11], // the table's own grid after upscaling to the minimum: 128² (16² patches)
      [200, 150, 12],
      [40, 100, 13],
      [256, 256, 14],
      [300, 170, 15], // over the maximum: shrunk
      [1, 1, 16],
      [13, 77, 17],
    ],
  },
  {
    name: 'lfm2-p14-noln-f16-s2',
    projector: 'lfm2',
    seed: 2,
    shape: {
      imageSize: 56,
      patchSize: 14,
      nEmbd: 48,
      nHeads: 6,
      nFf: 80,
      nLayers: 1,
      nEmbdText: 64,
      merge: 2,
      projHidden: 96,
      noInputNorm: true,
      matrices: 'f16',
    },
    images: [
      [120, 90, 18],
      [500, 90, 19],
    ],
  },
  {
    name: 'lfm2-tiles-s3',
    projector: 'lfm2',
    seed: 3,
    shape: { ...DEFAULT_LFM2_MMPROJ, nLayers: 1 },
    images: [[610, 290, 20]], // area over twice the maximum: 2×1 tiles of 512² (padded) + the thumbnail
  },
  {
    name: 'mlp-s1',
    projector: 'mlp',
    seed: 1,
    shape: DEFAULT_MLP_MMPROJ,
    images: [
      [48, 48, 21],
      [100, 40, 22], // bicubic, padded with llava's mean colour
      [31, 70, 23],
      [1, 1, 24],
    ],
  },
  {
    name: 'mlp-p14-f16-s2',
    projector: 'mlp',
    seed: 2,
    shape: {
      ...DEFAULT_MLP_MMPROJ,
      imageSize: 56,
      patchSize: 14,
      nEmbd: 48,
      nHeads: 6,
      nFf: 80,
      nLayers: 2,
      matrices: 'f16',
    },
    images: [
      [200, 120, 25],
      [56, 56, 26],
    ],
  },
  {
    // llava conversions with `clip.vision.feature_layer`: blocks up to the deepest listed, those states concatenated.
    name: 'mlp-feature-layers-s6',
    projector: 'mlp',
    seed: 6,
    shape: { ...DEFAULT_MLP_MMPROJ, keys: { 'clip.vision.feature_layer': [0, 2, 3] } },
    images: [[40, 50, 203]],
  },
  {
    name: 'mlp-feature-last-s6',
    projector: 'mlp',
    seed: 6,
    shape: { ...DEFAULT_MLP_MMPROJ, keys: { 'clip.vision.feature_layer': [3] } }, // every block, the last one's output
    images: [[40, 50, 203]],
  },
  {
    name: 'pixtral-merge2-s1',
    projector: 'pixtral',
    seed: 1,
    shape: DEFAULT_PIXTRAL_MMPROJ,
    images: [
      [64, 48, 27],
      [200, 150, 28],
      [20, 20, 29], // under the minimum: scaled up
      [90, 200, 30],
    ],
  },
  {
    name: 'pixtral-p14-f16-s2',
    projector: 'pixtral',
    seed: 2,
    shape: {
      ...DEFAULT_PIXTRAL_MMPROJ,
      imageSize: 56,
      patchSize: 14,
      nEmbd: 48,
      nHeads: 4,
      nFf: 80,
      merge: 1,
      matrices: 'f16',
    },
    images: [
      [120, 90, 31],
      [33, 71, 32],
    ],
  },
  {
    name: 'ldp-s1',
    projector: 'ldp',
    seed: 1,
    shape: DEFAULT_LDP_MMPROJ,
    images: [
      [48, 48, 41],
      [90, 40, 42], // bicubic, padded with llava's mean colour
    ],
  },
  {
    name: 'gemma4v-s1',
    projector: 'gemma4v',
    seed: 1,
    shape: DEFAULT_GEMMA4V_MMPROJ,
    images: [
      [64, 64, 33], // under the minimum: scaled up to 216²
      [100, 60, 34],
      [30, 90, 35],
    ],
  },
  {
    name: 'qwen25vl-s1',
    projector: 'qwen2.5vl_merger',
    seed: 1,
    shape: { ...DEFAULT_QWEN25VL_MMPROJ, nEmbdText: 64 },
    images: [
      [160, 96, 36], // 10 × 6 merged tokens: a 7-wide window and a 3-wide one
      [64, 64, 37],
      [30, 90, 38], // under the minimum: scaled up
      [250, 130, 39],
    ],
  },
  {
    name: 'qwen3vl-s1',
    projector: 'qwen3vl_merger',
    seed: 1,
    shape: { ...DEFAULT_QWEN3VL_MMPROJ, nEmbdText: 32, deepstack: 1 }, // rows 32 · (1 + 1) wide: the text model's 64
    images: [
      [160, 96, 40], // 10 × 6 merged tokens: the 6² position table resized to 20 × 12
      [48, 48, 41],
      [30, 90, 42], // under the minimum: scaled up
    ],
  },
];

const TEXT_MODEL = '../shared/models/stories260K.gguf';

interface OracleChunk {
  nTokens: number;
  nEmbd: number;
  inpRaw: { ne: number[]; data: string };
  embeddings: string;
}

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** Embedding rows kept per chunk: all up to this many, else this many evenly spaced ones (small JSON). */
const KEPT_ROWS = 16;

function summary(c: OracleChunk) {
  const raw = Buffer.from(c.inpRaw.data, 'base64');
  const f = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const picks = [0, 1, Math.floor(f.length / 3), Math.floor(f.length / 2), f.length - 1];
  const kept = {
    preprocessed: { ne: c.inpRaw.ne, sha256: sha256(raw), samples: picks.map((j) => [j, f[j]]) },
    nTokens: c.nTokens,
    nEmbd: c.nEmbd,
  };
  if (c.nTokens <= KEPT_ROWS) return { ...kept, embeddings: c.embeddings };
  const all = Buffer.from(c.embeddings, 'base64');
  const rows = Array.from({ length: KEPT_ROWS }, (_, i) => Math.floor((i * (c.nTokens - 1)) / (KEPT_ROWS - 1)));
  const rowBytes = c.nEmbd * 4;
  const picked = Buffer.concat(rows.map((r) => all.subarray(r * rowBytes, (r + 1) * rowBytes)));
  return { ...kept, rows, embeddings: picked.toString('base64') };
}

/** Entry point for scripts/run-ts.mjs. */
export function main(args: string[]): number {
  const outDir = resolve(args[0] ?? 'test/fixtures/vision/projectors');
  const tmp = mkdtempSync(join(tmpdir(), 'projector-ref-'));
  try {
    mkdirSync(outDir, { recursive: true });
    const only = args.slice(1); // case names to record (default: all)
    const extra = process.env.PROJECTOR_CASES;
    const cases = extra ? (JSON.parse(readFileSync(extra, 'utf8')) as ProjectorCase[]) : CASES;
    for (const c of cases.filter((k) => only.length === 0 || only.includes(k.name))) {
      const mmproj = MMPROJ_GENERATORS[c.projector](c.seed, c.shape);
      const mmprojFile = join(tmp, `${c.name}.mmproj.gguf`);
      writeFileSync(mmprojFile, mmproj);
      const images = c.images.map(([w, h, s], i) => {
        const rgbFile = join(tmp, `${c.name}-${i}.rgb`);
        writeFileSync(rgbFile, seedImage(w, h, s).data);
        return { width: w, height: h, rgbFile };
      });
      // A row of qwen3vl's output also carries one n_embd block per deepstack merger.
      const nEmbdText = c.shape.nEmbdText * (1 + (c.shape.deepstack ?? 0));
      const job = { mmproj: mmprojFile, textModel: resolve(TEXT_MODEL), nEmbdText, images };
      writeFileSync(join(tmp, 'job.json'), JSON.stringify(job));
      const r = spawnSync(
        process.execPath,
        ['make-image-reference.mjs', join(tmp, 'job.json'), join(tmp, 'out.json')],
        { cwd: 'scripts/oracle', stdio: ['ignore', 'ignore', 'inherit'] },
      );
      if (r.status !== 0) {
        console.error('the oracle failed (is scripts/oracle installed and LLCPP_BIN a CPU build of libmtmd?)');
        return 1;
      }
      const results = JSON.parse(readFileSync(join(tmp, 'out.json'), 'utf8')) as {
        chunks: OracleChunk[];
        refused?: number;
      }[];
      const doc = {
        about: `llama.cpp mtmd (CPU build, flash attention off, 1 thread) on a synthetic ${c.projector} mmproj and seed images; every image chunk in prompt order; regenerate with scripts/make-projector-reference.ts`,
        name: c.name,
        projector: c.projector,
        seed: c.seed,
        shape: c.shape,
        mmprojSha256: sha256(mmproj),
        images: c.images.map(([width, height, seed], i) => ({
          width,
          height,
          seed,
          ...(results[i].refused !== undefined ? { refused: true } : {}),
          chunks: results[i].chunks.map(summary),
        })),
      };
      writeFileSync(join(outDir, `${c.name}.json`), `${JSON.stringify(doc, null, 1)}\n`);
      console.log(`${c.name}: ${c.images.map((_, i) => results[i].chunks.length).join('/')} chunks per image`);
    }
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
