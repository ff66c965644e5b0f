/**
 * Loader for the golden vectors in ./vectors (made by scripts/oracle/make-quant-vectors.mjs from ggml's own
 * libggml-base): per type, random blocks with ggml's dequantized f32 bits, and quantizer inputs with ggml's
 * reference-quantized block bytes. All payloads are base64 of little-endian bytes.
 */

import { readFileSync } from 'node:fs';
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

/** Names of the types that have a vector file (file name = lower-case type name). */
export const VECTOR_TYPES = [
  'F16', 'BF16', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q8_0', 'Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K', 'IQ4_NL', 'IQ4_XS',
] as const;

/** Reads and decodes `vectors/<type>.json`. */
export function loadVectors(type: string): QuantVectors {
  const url = new URL(`./vectors/${type.toLowerCase()}.json`, import.meta.url);
  const raw = JSON.parse(readFileSync(fileURLToPath(url), 'utf8')) as RawVectors;
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
            return { input: new Float32Array(inp.buffer, 0, inp.length / 4), expectedBlocks: fromB64(raw.quantize.expectedBlocks) };
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
