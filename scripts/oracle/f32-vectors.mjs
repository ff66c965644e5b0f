// Golden vectors for F32, which ggml stores as plain little-endian floats: its row conversion is a byte copy both
// ways (no dequantize_row_f32 exists to call), so the expected bytes are the input bytes, NaN payloads included.
// Used by make-quant-vectors.mjs; needs no ggml, so `node scripts/oracle/f32-vectors.mjs` writes the file alone.

import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mulberry32 } from '../deterministic-random.mjs';

const b64 = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64');

/** The F32 vector file's object: specials (±0, subnormals, ±Inf, NaN payloads) and random bit patterns. */
export function f32Vectors() {
  const r = mulberry32(3003);
  const specials = [
    0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x00800000, 0x7f7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
    0x7f800001, 0xffc12345, 0x3f800000,
  ];
  const bits = Uint32Array.from([...specials, ...Array.from({ length: 244 }, () => (r() * 4294967296) >>> 0)]);
  const bytes = new Uint8Array(bits.buffer);
  return {
    type: 'F32',
    source: 'identity: ggml F32 rows are plain floats (scripts/oracle/f32-vectors.mjs)',
    dequantize: { nElements: bits.length, blocks: b64(bytes), expectedF32: b64(bytes) },
    quantize: { input: b64(bytes), expectedBlocks: b64(bytes) },
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = resolve(fileURLToPath(new URL('../../test/unit/quant/vectors/f32.json', import.meta.url)));
  writeFileSync(out, JSON.stringify(f32Vectors(), null, 1) + '\n');
  console.log(out);
}
