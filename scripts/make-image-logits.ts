/**
 * Records llama.cpp mtmd's answer for a prompt holding an image (issue #17 conformance): builds the C oracle
 * (scripts/oracle/mtmd-logits.c) against the CPU build of libmtmd/libllama (LLCPP_SRC, default /work/cache/llcpp,
 * libraries in its build/bin), runs it on a shared random-weight text model (its vocabulary edited to hold the
 * projector's marker tokens where the case says), a synthetic mmproj of the case's projector at the model's width and
 * a seed image, and writes test/fixtures/vision/logits-<name>.json: mtmd's chunks (text token ids,
 * the image's start and size), the image embeddings and the logits of the text positions after the image (f32
 * base64; the first few). Regenerate: `node scripts/run-ts.mjs scripts/make-image-logits.ts [out dir [case …]]`.
 * Chunk starts are KV indices (an M-RoPE image's tokens advance mtmd's rope position by max(nx, ny) only).
 */

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEFAULT_GEMMA3_MMPROJ } from './synthetic/mmproj-gemma3.js';
import { DEFAULT_GEMMA4V_MMPROJ } from './synthetic/mmproj-gemma4v.js';
import { MMPROJ_GENERATORS, type MmprojShape } from './synthetic/mmproj-generators.js';
import { DEFAULT_IDEFICS3_MMPROJ } from './synthetic/mmproj-idefics3.js';
import { DEFAULT_LDP_MMPROJ } from './synthetic/mmproj-ldp.js';
import { DEFAULT_LFM2_MMPROJ } from './synthetic/mmproj-lfm2.js';
import { DEFAULT_MLP_MMPROJ } from './synthetic/mmproj-mlp.js';
import { DEFAULT_PIXTRAL_MMPROJ } from './synthetic/mmproj-pixtral.js';
import { DEFAULT_QWEN25VL_MMPROJ } from './synthetic/mmproj-qwen25vl.js';
import { DEFAULT_QWEN3VL_MMPROJ } from './synthetic/mmproj-qwen3vl.js';
import { writeSyntheticModel } from './synthetic-model.js';
import { GgmlType } from '../src/gguf/types.js';
import { retokenModel } from './synthetic/retoken-model.js';
import { seedImage } from './synthetic/seed-image.mjs';

interface LogitsCase {
  readonly name: string;
  /** Under ../shared/models, or a label of the `synthetic` model. */
  readonly model: string;
  /** A random-weight F16 text model the fixture tool writes (scripts/synthetic-model.ts) instead of a shared one. */
  readonly synthetic?: { readonly arch: string; readonly seed: number };
  /** Vocabulary entries renamed in the model (scripts/synthetic/retoken-model.ts): the projector's marker tokens. */
  readonly vocabEdits?: readonly (readonly [number, string])[];
  /** `clip.projector_type` of the mmproj (default gemma3). */
  readonly projector?: string;
  readonly mmprojSeed: number;
  readonly shape: MmprojShape;
  readonly image: readonly [width: number, height: number, seed: number];
  /** `<__media__>` marks the image. */
  readonly prompt: string;
}

const CASES: readonly LogitsCase[] = [
  {
    name: 'gemma3-f16',
    model: 'arch/gemma3-f16.gguf',
    mmprojSeed: 5,
    shape: { ...DEFAULT_GEMMA3_MMPROJ, nEmbdText: 256 },
    image: [40, 30, 7],
    prompt: 'Once upon a time, <__media__> there was a robot.',
  },
  {
    name: 'gemma3-f16-16tok',
    model: 'arch/gemma3-f16.gguf',
    mmprojSeed: 6,
    shape: {
      ...DEFAULT_GEMMA3_MMPROJ,
      imageSize: 112,
      patchSize: 14,
      nEmbd: 48,
      nHeads: 6,
      nFf: 80,
      nLayers: 1,
      merge: 2,
      nEmbdText: 256,
    },
    image: [90, 120, 8],
    prompt: 'A picture: <__media__> It shows',
  },
  {
    // SmolVLM's text model is llama: llama3's reserved control tokens renamed to idefics3's markers; 3×2 tiles
    // (row 2's markers are not in the vocabulary and tokenize as text, as they would in llama.cpp) + the overview.
    name: 'idefics3-llama3-f16',
    model: 'arch/llama3-f16.gguf',
    vocabEdits: [
      [2002, '<fake_token_around_image>'],
      [2003, '<global-img>'],
      [2005, '<row_1_col_1>'],
      [2011, '<row_1_col_2>'],
    ],
    projector: 'idefics3',
    mmprojSeed: 7,
    shape: { ...DEFAULT_IDEFICS3_MMPROJ, nEmbdText: 256 },
    image: [70, 40, 9],
    prompt: 'Look: <__media__> What is it?',
  },
  {
    // LFM2-VL's text model is lfm2 (short convolutions + attention): one dynamic-resolution picture between
    // <|image_start|> / <|image_end|> (text here: the tiny vocabulary lacks them, on both sides alike).
    name: 'lfm2-f16',
    model: 'synthetic lfm2 f16 s9',
    synthetic: { arch: 'lfm2', seed: 9 },
    projector: 'lfm2',
    mmprojSeed: 8,
    shape: { ...DEFAULT_LFM2_MMPROJ, nEmbdText: 256 },
    image: [90, 60, 10],
    prompt: 'Look: <__media__> What is it?',
  },
  {
    // LLaVA-1.5's text model is llama: the picture's rows with no text around them.
    name: 'mlp-llama3-f16',
    model: 'arch/llama3-f16.gguf',
    projector: 'mlp',
    mmprojSeed: 9,
    shape: { ...DEFAULT_MLP_MMPROJ, nEmbdText: 256 },
    image: [60, 45, 11],
    prompt: 'USER: <__media__>\nWhat is it? ASSISTANT:',
  },
  {
    // Mistral Small 3.1's text model is mistral3: merged patch rows with [IMG_BREAK] rows between, then [IMG_END]
    // (text here: the tiny vocabulary lacks it, on both sides alike).
    name: 'pixtral-mistral3-f16',
    model: 'synthetic mistral3 f16 s10',
    synthetic: { arch: 'mistral3', seed: 10 },
    projector: 'pixtral',
    mmprojSeed: 10,
    shape: { ...DEFAULT_PIXTRAL_MMPROJ, nEmbdText: 256 },
    image: [64, 48, 12],
    prompt: '[INST]<__media__>What is it?[/INST]',
  },
  {
    // MobileVLM's text model is llama: the LDP projector's 144 rows with no text around them.
    name: 'ldp-llama3-f16',
    model: 'arch/llama3-f16.gguf',
    projector: 'ldp',
    mmprojSeed: 12,
    shape: { ...DEFAULT_LDP_MMPROJ, nEmbdText: 256, seHidden: 64 },
    image: [60, 45, 14],
    prompt: 'USER: <__media__>\nWhat is it? ASSISTANT:',
  },
  {
    // Gemma 4 (E2B-like text model with per-layer token embeddings: an image row's per-layer part is the padding
    // token's, id 0) with gemma4v: one dynamic-resolution picture between <|image> / <image|> (text here: the tiny
    // vocabulary lacks them, on both sides alike); rows non-causal at this width.
    name: 'gemma4v-gemma4-f16',
    model: 'synthetic gemma4 f16 s11',
    synthetic: { arch: 'gemma4', seed: 11 },
    projector: 'gemma4v',
    mmprojSeed: 11,
    shape: { ...DEFAULT_GEMMA4V_MMPROJ, nEmbdText: 256, nLayers: 1 },
    image: [64, 48, 13],
    prompt: 'Look: <__media__> What is it?',
  },
  {
    // Qwen2.5-VL's text model is qwen2vl (M-RoPE): a 10 × 6 grid of merged tokens at (p, p + row, p + col, 0) between
    // <|vision_start|> / <|vision_end|> (text here), the text after it at p + 10 (mtmd's n_past, not the KV index).
    name: 'qwen25vl-qwen2vl-f16',
    model: 'synthetic qwen2vl f16 s11',
    synthetic: { arch: 'qwen2vl', seed: 11 },
    projector: 'qwen2.5vl_merger',
    mmprojSeed: 11,
    shape: { ...DEFAULT_QWEN25VL_MMPROJ, nEmbdText: 256 },
    image: [160, 96, 13],
    prompt: 'Look: <__media__> What is it?',
  },
  {
    // Qwen3-VL's text model is qwen3vl (interleaved M-RoPE, deepstack): each image row carries the merger's output and
    // two deepstack blocks, added to the residual after text layers 0 and 1.
    name: 'qwen3vl-qwen3vl-f16',
    model: 'synthetic qwen3vl f16 s12',
    synthetic: { arch: 'qwen3vl', seed: 12 },
    projector: 'qwen3vl_merger',
    mmprojSeed: 12,
    shape: { ...DEFAULT_QWEN3VL_MMPROJ, nEmbdText: 256 },
    image: [100, 70, 14],
    prompt: 'Look: <__media__> What is it?',
  },
];

export interface OracleChunk {
  readonly type: 'text' | 'image';
  readonly start: number;
  readonly tokens?: number[];
  readonly logits?: string[];
  readonly n_tokens?: number;
  readonly non_causal?: boolean;
  readonly embeddings?: string;
}

/** Logits kept per text chunk after the image (each n_vocab f32): enough to pin the image's KV, small in git. */
const KEPT_POSITIONS = 3;

const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/**
 * Builds the oracle (scripts/oracle/mtmd-logits.c) into `dir` against the CPU libmtmd/libllama of LLCPP_SRC (default
 * /work/cache/llcpp, libraries in its build/bin); returns its path, or null when the compiler failed.
 */
export function buildMtmdOracle(dir: string): string | null {
  const src = process.env.LLCPP_SRC ?? '/work/cache/llcpp';
  const bin = join(src, 'build', 'bin');
  const exe = join(dir, 'mtmd-logits');
  const compiler = process.env.CC ?? 'cc'; // the system C compiler (dev-only oracle build)
  const cc = spawnSync(
    compiler,
    [
      '-O1',
      '-o',
      exe,
      'scripts/oracle/mtmd-logits.c',
      `-I${src}/include`,
      `-I${src}/ggml/include`,
      `-I${src}/tools/mtmd`,
      `-L${bin}`,
      '-lmtmd',
      '-lllama',
      '-lggml-base',
      '-lggml',
      `-Wl,-rpath,${bin}`,
    ],
    { stdio: 'inherit' },
  );
  return cc.status === 0 ? exe : null;
}

/** mtmd's answer for `prompt` (the image at `<__media__>`) with the RGB8 file `rgbPath`, or null when it failed. */
export function runMtmdOracle(
  exe: string,
  model: string,
  mmproj: string,
  rgbPath: string,
  width: number,
  height: number,
  prompt: string,
): { n_vocab: number; n_embd: number; chunks: OracleChunk[] } | null {
  const r = spawnSync(exe, [model, mmproj, rgbPath, `${width}`, `${height}`, prompt], {
    maxBuffer: 1 << 28,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return r.status === 0 ? (JSON.parse(r.stdout) as { n_vocab: number; n_embd: number; chunks: OracleChunk[] }) : null;
}

/** Entry point for scripts/run-ts.mjs. */
export async function main(args: string[]): Promise<number> {
  const outDir = resolve(args[0] ?? 'test/fixtures/vision');
  const tmp = mkdtempSync(join(tmpdir(), 'image-logits-'));
  try {
    const exe = buildMtmdOracle(tmp);
    if (exe === null) return 1;
    const only = args.slice(1); // case names to record (default: all)
    for (const c of CASES.filter((k) => only.length === 0 || only.includes(k.name))) {
      const projector = c.projector ?? 'gemma3';
      const mmproj = MMPROJ_GENERATORS[projector](c.mmprojSeed, c.shape);
      writeFileSync(join(tmp, 'mmproj.gguf'), mmproj);
      const [w, h, seed] = c.image;
      writeFileSync(join(tmp, 'image.rgb'), seedImage(w, h, seed).data);
      let modelPath = resolve('..', 'shared', 'models', c.model);
      if (c.synthetic) {
        modelPath = join(tmp, 'model.gguf');
        await writeSyntheticModel({ ...c.synthetic, quant: GgmlType.F16, out: modelPath });
      }
      if (c.vocabEdits) {
        const edited = await retokenModel(readFileSync(modelPath), c.vocabEdits);
        modelPath = join(tmp, 'model.gguf');
        writeFileSync(modelPath, edited);
      }
      const out = runMtmdOracle(exe, modelPath, join(tmp, 'mmproj.gguf'), join(tmp, 'image.rgb'), w, h, c.prompt);
      if (out === null) {
        console.error(`the oracle failed on ${c.name}`);
        return 1;
      }
      // Logits kept: the first positions after the last image, and the first after the first image when more
      // images follow (tiled projectors: the text between tiles).
      const first = out.chunks.findIndex((k) => k.type === 'image');
      const last = out.chunks.findLastIndex((k) => k.type === 'image');
      const kept = (i: number) => (i > last ? KEPT_POSITIONS : i === first + 1 ? 1 : 0);
      const doc = {
        about:
          'llama.cpp mtmd (CPU build, flash attention off, 1 thread): a prompt holding an image; logits of the first text positions after the image. Regenerate with scripts/make-image-logits.ts',
        name: c.name,
        model: c.model,
        model_sha256: sha256(readFileSync(modelPath)),
        ...(c.synthetic ? { synthetic: c.synthetic } : {}),
        ...(c.vocabEdits ? { vocab_edits: c.vocabEdits } : {}),
        mmproj: { ...(c.projector ? { projector } : {}), seed: c.mmprojSeed, shape: c.shape, sha256: sha256(mmproj) },
        image: { width: w, height: h, seed },
        prompt: c.prompt,
        n_vocab: out.n_vocab,
        chunks: out.chunks.map((k, i) =>
          k.type === 'image'
            ? {
                type: 'image',
                start: k.start,
                n_tokens: k.n_tokens,
                non_causal: k.non_causal,
                image_embeddings: k.embeddings,
              }
            : {
                type: 'text',
                start: k.start,
                tokens: k.tokens,
                ...(kept(i) > 0 ? { logits_per_position: k.logits!.slice(0, kept(i)) } : {}),
              },
        ),
      };
      writeFileSync(join(outDir, `logits-${c.name}.json`), `${JSON.stringify(doc)}\n`);
      console.log(
        `${c.name}: ${out.chunks.map((k) => (k.type === 'image' ? `[image ${k.n_tokens}]` : k.tokens!.length)).join(' + ')}`,
      );
    }
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
