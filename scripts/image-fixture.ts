/**
 * `npm run fixtures -- --arch <text arch> --mmproj <type> --image <file> --quant <q> --seed N --out DIR [--shape …]
 * [--prompt "… <__media__> …"]` (issue #17): next to the random-weight text model scripts/fixtures.ts wrote, a
 * random-weight mmproj of the projector type (gemma3, idefics3, lfm2, mlp, pixtral, gemma4v; its default synthetic
 * shape) at the model's width (`<model>.mmproj.gguf`, the same seed), and
 * `<model>.reference.json` as llama.cpp's mtmd answers a prompt holding the image (scripts/oracle/mtmd-logits.c through
 * scripts/make-image-logits.ts): the existing reference format's `model`, `prompt`, `n_vocab` and
 * `logits_per_position_kv_f32` (the text positions after the image, F32 KV), plus `eval_prompt` (mtmd's chunks: text
 * token ids and the image's place) and `image_embeddings` (f32 base64 [n_tokens, n_embd]).
 */

import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseGguf } from '../src/gguf/parse.js';
import { MemoryByteSource } from '../src/io/byte-source.js';
import { readModelConfig } from '../src/model/load.js';
import { decodeImage } from '../src/vision/decode-image.js';
import { buildMtmdOracle, runMtmdOracle } from './make-image-logits.js';
import { retokenModel } from './synthetic/retoken-model.js';
import { DEFAULT_GEMMA3_MMPROJ } from './synthetic/mmproj-gemma3.js';
import { DEFAULT_GEMMA4V_MMPROJ } from './synthetic/mmproj-gemma4v.js';
import { MMPROJ_GENERATORS, type MmprojShape } from './synthetic/mmproj-generators.js';
import { DEFAULT_IDEFICS3_MMPROJ } from './synthetic/mmproj-idefics3.js';
import { DEFAULT_LDP_MMPROJ } from './synthetic/mmproj-ldp.js';
import { DEFAULT_LFM2_MMPROJ } from './synthetic/mmproj-lfm2.js';
import { DEFAULT_MLP_MMPROJ } from './synthetic/mmproj-mlp.js';
import { DEFAULT_PIXTRAL_MMPROJ } from './synthetic/mmproj-pixtral.js';

/** The default random-weight mmproj shape of each projector type this tool generates (its width set to the model's). */
const SHAPES: Readonly<Record<string, MmprojShape>> = {
  gemma3: DEFAULT_GEMMA3_MMPROJ,
  idefics3: DEFAULT_IDEFICS3_MMPROJ,
  lfm2: DEFAULT_LFM2_MMPROJ,
  mlp: DEFAULT_MLP_MMPROJ,
  pixtral: DEFAULT_PIXTRAL_MMPROJ,
  gemma4v: DEFAULT_GEMMA4V_MMPROJ,
  ldp: DEFAULT_LDP_MMPROJ,
};

/** Projector types this tool generates an mmproj for: every type with a generator and a default shape. */
const GENERATORS: Readonly<Record<string, (seed: number, nEmbdText: number) => Uint8Array>> = Object.fromEntries(
  Object.entries(SHAPES).map(([type, shape]) => [
    type,
    (seed: number, nEmbdText: number) => MMPROJ_GENERATORS[type]!(seed, { ...shape, nEmbdText }),
  ]),
);

/**
 * Marker tokens mtmd looks up by text (`lookup_token`) and refuses to run without, per projector: the tool renames the
 * model's reserved special tokens to them (scripts/synthetic/retoken-model.ts), as the committed idefics3 case does.
 */
const MARKERS: Readonly<Record<string, readonly string[]>> = {
  idefics3: ['<fake_token_around_image>', '<global-img>', '<row_1_col_1>', '<row_1_col_2>', '<row_2_col_1>'],
};

/** The model's bytes with its reserved special tokens renamed to the projector's markers; null when it has too few. */
async function withMarkers(model: Uint8Array, projector: string): Promise<Uint8Array | null> {
  const markers = MARKERS[projector];
  if (markers === undefined) return model;
  const tokens = (await parseGguf(new MemoryByteSource(model))).metadata['tokenizer.ggml.tokens'] as string[];
  const reserved = tokens.flatMap((t, i) => (/^<\|reserved_special_token_\d+\|>$/.test(t) ? [i] : []));
  if (reserved.length < 2) return null; // mtmd needs at least the first two
  return retokenModel(
    model,
    reserved.slice(0, markers.length).map((id, i) => [id, markers[i]!] as const),
  );
}

/** The f32 rows of several base64 chunks, one after the other, as base64. */
function concatBase64(chunks: readonly string[]): string {
  return Buffer.concat(chunks.map((c) => Buffer.from(c, 'base64'))).toString('base64');
}

/** mtmd's default image marker. */
const MEDIA_MARKER = '<__media__>';

const f32Base64 = (b64: string): number[] => {
  const raw = Buffer.from(b64, 'base64');
  return Array.from(new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength)));
};

/**
 * Writes the mmproj and the mtmd reference for the text model at `modelPath`; returns the exit status (1 with a message
 * when the projector type is unknown, the image unreadable or the oracle cannot be built or run).
 */
export async function writeImageReference(
  modelPath: string,
  projector: string,
  imagePath: string,
  seed: number,
  prompt: string,
): Promise<number> {
  const generate = GENERATORS[projector];
  if (!generate) {
    console.error(`--mmproj ${projector}: this tool generates ${Object.keys(GENERATORS).join(', ')}`);
    return 2;
  }
  const modelBytes = await withMarkers(new Uint8Array(readFileSync(modelPath)), projector);
  if (modelBytes === null) {
    console.error(
      `--mmproj ${projector}: mtmd needs the marker tokens ${MARKERS[projector]!.join(' ')} in the vocabulary, and ` +
        "this model has too few reserved special tokens to rename (use --arch llama: llama3's vocabulary)",
    );
    return 2;
  }
  writeFileSync(modelPath, modelBytes); // markers renamed in (idefics3), else unchanged
  const nEmbd = readModelConfig(await parseGguf(new MemoryByteSource(modelBytes))).embeddingLength;
  const mmprojPath = modelPath.replace(/\.gguf$/, '.mmproj.gguf');
  const mmproj = generate(seed, nEmbd);
  writeFileSync(mmprojPath, mmproj);
  const image = await decodeImage(new Uint8Array(readFileSync(imagePath)));
  const text = prompt.includes(MEDIA_MARKER) ? prompt : `${MEDIA_MARKER}${prompt}`;
  const tmp = mkdtempSync(path.join(tmpdir(), 'image-fixture-'));
  try {
    const exe = buildMtmdOracle(tmp);
    if (exe === null) return 1;
    const rgbPath = path.join(tmp, 'image.rgb');
    writeFileSync(rgbPath, image.data);
    const out = runMtmdOracle(exe, modelPath, mmprojPath, rgbPath, image.width, image.height, text);
    if (out === null) {
      console.error(`fixtures: the mtmd oracle failed on ${modelPath} with ${imagePath}`);
      return 1;
    }
    // Tiled projectors (idefics3, lfm2 tiles) make several image chunks with text between: the logits kept are those
    // after the last one, the embeddings every chunk's rows in prompt order (as the encoder's `embeddings`).
    const last = out.chunks.findLastIndex((c) => c.type === 'image');
    const after = out.chunks.slice(last + 1).flatMap((c) => c.logits ?? []);
    const images = out.chunks.flatMap((c) => (c.type === 'image' && c.embeddings ? [c.embeddings] : []));
    const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
    const doc = {
      model: path.basename(modelPath),
      model_sha256: sha(modelBytes),
      mmproj: path.basename(mmprojPath),
      mmproj_sha256: sha(mmproj),
      producer: { tool: 'llama.cpp mtmd (scripts/oracle/mtmd-logits.c, CPU, flash attention off, 1 thread)' },
      prompt: text,
      image: { file: path.basename(imagePath), width: image.width, height: image.height },
      n_vocab: out.n_vocab,
      note: 'logits_per_position_kv_f32[i] = logits after the i-th text token following the (last) image chunk (F32 KV); image_embeddings: every image chunk in prompt order',
      eval_prompt: out.chunks.map((c) =>
        c.type === 'image'
          ? { type: 'image', start: c.start, n_tokens: c.n_tokens, non_causal: c.non_causal }
          : { type: 'text', start: c.start, tokens: c.tokens },
      ),
      image_embeddings: images.length > 0 ? concatBase64(images) : null,
      logits_per_position_kv_f32: after.map(f32Base64),
    };
    const refPath = modelPath.replace(/\.gguf$/, '.reference.json');
    writeFileSync(refPath, `${JSON.stringify(doc)}\n`);
    console.log(
      `${mmprojPath}\n${refPath}: ${doc.eval_prompt.length} chunks, ${after.length} positions after the image`,
    );
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
