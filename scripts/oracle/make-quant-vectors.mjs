#!/usr/bin/env node
// Golden vectors for webgguf's quant types, computed by ggml itself: loads node-llama-cpp's prebuilt libggml-base
// through koffi and calls its exported dequantize_row_<type>, quantize_row_<type>_ref and f16/bf16 row converters on
// deterministic pseudo-random data. Writes test/unit/quant/vectors/<type>.json (base64 payloads, little-endian).
// Usage (dev only, needs `cd scripts/oracle && npm install`): node scripts/oracle/make-quant-vectors.mjs [outDir]

import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadGgmlBase } from './ggml-lib.mjs';
import { mulberry32 } from '../deterministic-random.mjs';
import { f32Vectors } from './f32-vectors.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const outDir = resolve(process.argv[2] ?? resolve(here, '../../test/unit/quant/vectors'));
mkdirSync(outDir, { recursive: true });

const ggml = loadGgmlBase();

// --- deterministic randomness (mulberry32) -------------------------------------------------------------------------
const rng = mulberry32;
const gauss = (r) => Math.sqrt(-2 * Math.log(r() + 1e-12)) * Math.cos(2 * Math.PI * r());

// --- f16 helpers for building sane block scales ------------------------------------------------------------------------
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** Round-to-nearest-even f32 → f16 bits (finite, normal-range inputs only; used just to plant scales). */
function toF16(x) {
  const out = new Uint16Array(1);
  ggml.fp32ToFp16Row(Float32Array.of(x), out, 1);
  return out[0];
}
const b64 = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('base64');

// --- type table: name, ggml symbol suffix, block geometry, where f16 scales sit inside a block ---------------------------
// f16Fields: byte offsets of f16 scale fields; the generator overwrites random bytes there with sane scales.
const TYPES = [
  { name: 'Q4_0', sym: 'q4_0', qk: 32, bytes: 18, f16Fields: [0] },
  { name: 'Q4_1', sym: 'q4_1', qk: 32, bytes: 20, f16Fields: [0, 2] },
  { name: 'Q5_0', sym: 'q5_0', qk: 32, bytes: 22, f16Fields: [0] },
  { name: 'Q5_1', sym: 'q5_1', qk: 32, bytes: 24, f16Fields: [0, 2] },
  { name: 'Q8_0', sym: 'q8_0', qk: 32, bytes: 34, f16Fields: [0] },
  { name: 'Q2_K', sym: 'q2_K', qk: 256, bytes: 84, f16Fields: [80, 82] },
  { name: 'Q3_K', sym: 'q3_K', qk: 256, bytes: 110, f16Fields: [108] },
  { name: 'Q4_K', sym: 'q4_K', qk: 256, bytes: 144, f16Fields: [0, 2] },
  { name: 'Q5_K', sym: 'q5_K', qk: 256, bytes: 176, f16Fields: [0, 2] },
  { name: 'Q6_K', sym: 'q6_K', qk: 256, bytes: 210, f16Fields: [208] },
  { name: 'IQ4_NL', sym: 'iq4_nl', qk: 32, bytes: 18, f16Fields: [0] },
  { name: 'IQ4_XS', sym: 'iq4_xs', qk: 256, bytes: 136, f16Fields: [0] },
  // Appended (earlier types keep their seeds). The IQ1–IQ3 codebook types are dequantize-only in webgguf (their
  // ggml quantizers need an importance matrix or start-up neighbour tables): no quantize vectors (noQuantize).
  { name: 'IQ2_XXS', sym: 'iq2_xxs', qk: 256, bytes: 66, f16Fields: [0], noQuantize: true },
  { name: 'IQ2_XS', sym: 'iq2_xs', qk: 256, bytes: 74, f16Fields: [0], noQuantize: true },
  { name: 'IQ2_S', sym: 'iq2_s', qk: 256, bytes: 82, f16Fields: [0], noQuantize: true },
  { name: 'IQ3_XXS', sym: 'iq3_xxs', qk: 256, bytes: 98, f16Fields: [0], noQuantize: true },
  { name: 'IQ3_S', sym: 'iq3_s', qk: 256, bytes: 110, f16Fields: [0], noQuantize: true },
  { name: 'IQ1_S', sym: 'iq1_s', qk: 256, bytes: 50, f16Fields: [0], noQuantize: true },
  // IQ1_M's f16 scale is the top nibbles of its four u16 scale words (bytes 49, 51, 53, 55: high nibble each).
  { name: 'IQ1_M', sym: 'iq1_m', qk: 256, bytes: 56, f16Fields: [], iq1mScale: true, noQuantize: true },
  // MXFP4's scale is an E8M0 byte at 0: edge exponents 0, 1 (subnormal results), 2, 254, then 110…140.
  { name: 'MXFP4', sym: 'mxfp4', qk: 32, bytes: 17, f16Fields: [], e8m0: true },
];

/** Random blocks: random bytes with sane f16 scales; a few blocks carry edge scales (0, subnormal, negative, large). */
function randomBlocks(t, nBlocks, seed) {
  const r = rng(seed);
  const out = new Uint8Array(nBlocks * t.bytes);
  for (let i = 0; i < out.length; i++) out[i] = (r() * 256) | 0;
  const edge = [0, 2.0e-7 /* subnormal */, -0.0123, 3.5, 6.1e-5 /* smallest normal */];
  for (let b = 0; b < nBlocks; b++) {
    if (t.e8m0) out[b * t.bytes] = b < 4 ? [0, 1, 2, 254][b] : 110 + ((r() * 31) | 0);
    if (t.iq1mScale) {
      const v = b < edge.length ? edge[b] : Math.pow(2, -12 + r() * 10) * (r() < 0.25 ? -1 : 1);
      const h = toF16(v);
      for (let s = 0; s < 4; s++) {
        const at = b * t.bytes + 49 + 2 * s;
        out[at] = (out[at] & 0x0f) | (((h >> (4 * s)) & 0xf) << 4);
      }
    }
    for (const f of t.f16Fields) {
      const mag = Math.pow(2, -12 + r() * 10) * (r() < 0.25 ? -1 : 1);
      const v = b < edge.length && f === t.f16Fields[0] ? edge[b] : mag;
      const h = toF16(v);
      out[b * t.bytes + f] = h & 0xff;
      out[b * t.bytes + f + 1] = h >> 8;
    }
  }
  return out;
}

/** Quantizer inputs: per-block varied distributions, including an all-zero, a constant and a one-sided block. */
function quantInputs(qk, nBlocks, seed) {
  const r = rng(seed);
  const x = new Float32Array(qk * nBlocks);
  for (let b = 0; b < nBlocks; b++) {
    const scale = Math.pow(10, -3 + r() * 4);
    for (let j = 0; j < qk; j++) {
      let v = gauss(r) * scale;
      if (b === 1)
        v = 0; // all zero
      else if (b === 2)
        v = 0.37 * scale; // constant
      else if (b === 3)
        v = Math.abs(v); // all positive
      else if (b === 4)
        v = -Math.abs(v) - 0.1 * scale; // all negative, offset
      else if (b === 5 && j % 11 === 0)
        v *= 20; // outliers
      else if (b === 6) v = (Math.round((v / scale) * 4) / 4) * scale; // many ties
      x[b * qk + j] = v;
    }
  }
  return x;
}

const sha256 = (u8) => createHash('sha256').update(u8).digest('hex');
const written = [];
function save(name, obj) {
  const file = resolve(outDir, `${name.toLowerCase()}.json`);
  writeFileSync(file, JSON.stringify(obj, null, 1) + '\n');
  written.push(file);
}

// --- block types -------------------------------------------------------------------------------------------------------
for (const [idx, t] of TYPES.entries()) {
  const nBlocks = t.qk === 256 ? 6 : 40;
  const k = nBlocks * t.qk;
  const blocks = randomBlocks(t, nBlocks, 1000 + idx);
  const deq = new Float32Array(k);
  ggml.dequantizeRow(t.sym, blocks, deq, k);

  const qBlocks = t.qk === 256 ? 8 : 16;
  const x = quantInputs(t.qk, qBlocks, 2000 + idx);
  const q = new Uint8Array(qBlocks * t.bytes);
  const hasRef = !t.noQuantize && ggml.hasQuantizeRef(t.sym);
  if (hasRef) ggml.quantizeRowRef(t.sym, x, q, x.length);
  save(t.name, {
    type: t.name,
    source: 'ggml libggml-base (node-llama-cpp 3.22.1 prebuilt) via scripts/oracle/make-quant-vectors.mjs',
    dequantize: { nElements: k, blocks: b64(blocks), expectedF32: b64(new Uint8Array(deq.buffer)) },
    quantize: hasRef ? { input: b64(new Uint8Array(x.buffer)), expectedBlocks: b64(q) } : null,
  });
}

// --- F16 -----------------------------------------------------------------------------------------------------------------
{
  const all = new Uint16Array(65536).map((_, i) => i);
  const allOut = new Float32Array(65536);
  ggml.fp16ToFp32Row(all, allOut, 65536);
  const r = rng(77);
  const specials = [
    0x0000, 0x8000, 0x0001, 0x8001, 0x03ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7c01, 0x7e00, 0xfe00, 0x7fff,
    0x3c00, 0x3555,
  ];
  const sample = Uint16Array.from([...specials, ...Array.from({ length: 240 }, () => (r() * 65536) | 0)]);
  const sampleOut = new Float32Array(sample.length);
  ggml.fp16ToFp32Row(sample, sampleOut, sample.length);
  // f32 → f16 rounding: ties, subnormal boundaries, overflow, NaN, random.
  const f32In = [];
  const ints = [
    0x33000000, 0x33000001, 0x32ffffff, 0x387fe000, 0x387ff000, 0x38800000, 0x477fefff, 0x477ff000, 0x47800000,
    0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0xffc12345, 0x3f801000, 0x3f803000, 0x3f801001, 0x00000001,
    0x80000000,
  ];
  for (const i of ints) {
    u32[0] = i;
    f32In.push(f32[0]);
  }
  for (let i = 0; i < 256; i++) {
    u32[0] = (r() * 4294967296) >>> 0;
    f32In.push(f32[0]);
  }
  for (let i = 0; i < 128; i++) f32In.push(gauss(r) * Math.pow(2, -20 + r() * 36));
  const toIn = Float32Array.from(f32In);
  // keep the exact bit patterns (Float32Array.from may canonicalise NaNs): rebuild from bits
  const inBits = new Uint32Array(toIn.length);
  for (let i = 0; i < ints.length; i++) inBits[i] = ints[i];
  new Float32Array(inBits.buffer, ints.length * 4).set(toIn.subarray(ints.length));
  const inF = new Float32Array(inBits.buffer);
  const toOut = new Uint16Array(inF.length);
  ggml.fp32ToFp16Row(inF, toOut, inF.length);
  save('F16', {
    type: 'F16',
    source: 'ggml_fp16_to_fp32_row / ggml_fp32_to_fp16_row',
    dequantize: {
      nElements: sample.length,
      blocks: b64(new Uint8Array(sample.buffer)),
      expectedF32: b64(new Uint8Array(sampleOut.buffer)),
    },
    dequantizeAllSha256: sha256(new Uint8Array(allOut.buffer)),
    quantize: { input: b64(new Uint8Array(inF.buffer)), expectedBlocks: b64(new Uint8Array(toOut.buffer)) },
  });

  // BF16: dequant of random bits + specials; quantize via ggml_fp32_to_bf16_row_ref
  const bfSample = Uint16Array.from([
    0x0000,
    0x8000,
    0x7f80,
    0xff80,
    0x7fc0,
    0x7f81,
    0x0001,
    0x3f80,
    ...Array.from({ length: 120 }, () => (r() * 65536) | 0),
  ]);
  const bfOut = new Float32Array(bfSample.length);
  ggml.bf16ToFp32Row(bfSample, bfOut, bfSample.length);
  const bfQ = new Uint16Array(inF.length);
  ggml.fp32ToBf16RowRef(inF, bfQ, inF.length);
  save('BF16', {
    type: 'BF16',
    source: 'ggml_bf16_to_fp32_row / ggml_fp32_to_bf16_row_ref',
    dequantize: {
      nElements: bfSample.length,
      blocks: b64(new Uint8Array(bfSample.buffer)),
      expectedF32: b64(new Uint8Array(bfOut.buffer)),
    },
    quantize: { input: b64(new Uint8Array(inF.buffer)), expectedBlocks: b64(new Uint8Array(bfQ.buffer)) },
  });
}

save('F32', f32Vectors());

for (const f of written) console.log(f);
