/**
 * `npm run fixtures -- --arch <text arch> --mmproj gemma3 --image <file> --quant <q> --seed N --out DIR [--shape …]
 * [--prompt "… <__media__> …"]` (issue #17): next to the random-weight text model scripts/fixtures.ts wrote, a
 * random-weight mmproj of the projector type at the model's width (`<model>.mmproj.gguf`, the same seed), and
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
import { DEFAULT_GEMMA3_MMPROJ, gemma3Mmproj } from './synthetic/mmproj-gemma3.js';

/** Projector types this tool generates an mmproj for. */
const GENERATORS: Readonly<Record<string, (seed: number, nEmbdText: number) => Uint8Array>> = {
  gemma3: (seed, nEmbdText) => gemma3Mmproj(seed, { ...DEFAULT_GEMMA3_MMPROJ, nEmbdText }),
};

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
  const modelBytes = new Uint8Array(readFileSync(modelPath));
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
    const at = out.chunks.findIndex((c) => c.type === 'image');
    const after = out.chunks.slice(at + 1).flatMap((c) => c.logits ?? []);
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
      note: 'logits_per_position_kv_f32[i] = logits after the i-th text token following the image (F32 KV)',
      eval_prompt: out.chunks.map((c) =>
        c.type === 'image'
          ? { type: 'image', start: c.start, n_tokens: c.n_tokens, non_causal: c.non_causal }
          : { type: 'text', start: c.start, tokens: c.tokens },
      ),
      image_embeddings: out.chunks[at]?.embeddings ?? null,
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
