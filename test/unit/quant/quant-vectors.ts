/**
 * Loader for the golden vectors in ./vectors (made by scripts/oracle/make-quant-vectors.mjs from ggml's own
 * libggml-base): per type, random blocks with ggml's dequantized f32 bits, and quantizer inputs with ggml's
 * reference-quantized block bytes. All payloads are base64 of little-endian bytes.
 */

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One type's vectors, decoded. */
export interface QuantVectors {
  readonly type: string;
  readonly dequantize: { readonly nElements: number; readonly blocks: Uint8Array; readonly expectedBits: Uint32Array };
  readonly quantize: { readonly input: Float32Array; readonly expectedBlocks: Uint8Array } | null;
  readonly dequantizeAllSha256?: string;
}

interface RawVectors {
  type: string;
  dequantize: { nElements: number; blocks: string; expectedF32: string };
  quantize: { input: string; expectedBlocks: string } | null;
  dequantizeAllSha256?: string;
}

const fromB64 = (s: string): Uint8Array => {
  const b = Buffer.from(s, 'base64');
  // copy into a fresh, 4-byte-aligned buffer so typed views over it are legal
  const out = new Uint8Array(b.length);
  out.set(b);
  return out;
};

/** Path of a type's vector file (file name = lower-case type name). */
export function vectorPath(type: string): string {
  return fileURLToPath(new URL(`./vectors/${type.toLowerCase()}.json`, import.meta.url));
}

/**
 * Reads and decodes `vectors/<type>.json`.
 * @throws Error naming the generator when the type has no vector file: every registry type must have one.
 */
export function loadVectors(type: string): QuantVectors {
  const file = vectorPath(type);
  if (!existsSync(file)) {
    throw new Error(`quant type ${type} has no golden vectors (${file}): run scripts/oracle/make-quant-vectors.mjs`);
  }
  const raw = JSON.parse(readFileSync(file, 'utf8')) as RawVectors;
  if (raw.type !== type) throw new Error(`${file} holds vectors of ${raw.type}, not ${type}`);
  const exp = fromB64(raw.dequantize.expectedF32);
  return {
    type: raw.type,
    dequantize: {
      nElements: raw.dequantize.nElements,
      blocks: fromB64(raw.dequantize.blocks),
      expectedBits: new Uint32Array(exp.buffer, 0, exp.length / 4),
    },
    quantize:
      raw.quantize === null
        ? null
        : (() => {
            const inp = fromB64(raw.quantize.input);
            return {
              input: new Float32Array(inp.buffer, 0, inp.length / 4),
              expectedBlocks: fromB64(raw.quantize.expectedBlocks),
            };
          })(),
    ...(raw.dequantizeAllSha256 !== undefined ? { dequantizeAllSha256: raw.dequantizeAllSha256 } : {}),
  };
}

/** Index and hex of the first differing element of two bit arrays, or null when equal. */
export function firstBitDiff(a: Uint32Array, b: Uint32Array): string | null {
  if (a.length !== b.length) return `length ${a.length} vs ${b.length}`;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i]) return `element ${i}: got 0x${a[i]!.toString(16)} want 0x${b[i]!.toString(16)}`;
  }
  return null;
}
