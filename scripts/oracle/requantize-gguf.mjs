#!/usr/bin/env node
// Re-types the matrices of an all-F32 GGUF with ggml's own quantizer (`ggml_quantize_chunk` in node-llama-cpp's
// prebuilt libggml-base, through koffi), passing a deterministic synthetic importance matrix: the IQ1_S, IQ1_M,
// IQ2_XXS, IQ2_XS, IQ2_S and IQ3_XXS quantizers refuse to run without one, and llama_model_quantize
// (quantize-model.mjs) takes it only as a C++ map. Metadata is copied verbatim; general.file_type is set.
// Usage: node scripts/oracle/requantize-gguf.mjs <in-f32.gguf> <out.gguf> <TYPE> [--embed TYPE]
//   TYPE: a ggml type name (IQ2_XXS, IQ1_M, MXFP4 …). Every 2-D tensor whose row fits TYPE's blocks gets TYPE, others
//   fall back as llama.cpp does (256-element IQ types → IQ4_NL, else F16); 1-D tensors stay F32. --embed types
//   token_embd.weight (default: TYPE).

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import koffi from 'koffi';
import { nativeBinDir } from './ggml-lib.mjs';

/** ggml type ids, block sizes and bytes (ggml-common.h), for the types this script writes. */
const TYPES = {
  F32: [0, 1, 4],
  F16: [1, 1, 2],
  Q8_0: [8, 32, 34],
  IQ2_XXS: [16, 256, 66],
  IQ2_XS: [17, 256, 74],
  IQ3_XXS: [18, 256, 98],
  IQ1_S: [19, 256, 50],
  IQ4_NL: [20, 32, 18],
  IQ3_S: [21, 256, 110],
  IQ2_S: [22, 256, 82],
  IQ1_M: [29, 256, 56],
  MXFP4: [39, 32, 17],
};
/** llama_ftype of a file mostly of one type (llama.h; IQ2_S is MOSTLY_IQ2_M's default type). */
const FILE_TYPE = { IQ2_XXS: 19, IQ2_XS: 20, IQ3_XXS: 23, IQ1_S: 24, IQ3_S: 26, IQ2_S: 29, IQ1_M: 31, MXFP4: 38 };

function ggml() {
  const dir = nativeBinDir();
  const file = readdirSync(dir).find((f) => f.startsWith('libggml-base') && /\.so|\.dylib|\.dll/.test(f));
  const lib = koffi.load(join(dir, file));
  return {
    quantizeChunk: lib.func(
      'size_t ggml_quantize_chunk(int type, const float *src, void *dst, int64_t start, int64_t nrows, int64_t n_per_row, const float *imatrix)',
    ),
    fp32ToFp16Row: lib.func('void ggml_fp32_to_fp16_row(const float *x, void *y, int64_t n)'),
  };
}

/** A forward-only reader of GGUF's little-endian fields. */
class Reader {
  constructor(buf) {
    this.buf = buf;
    this.dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = 0;
  }
  u32() {
    const v = this.dv.getUint32(this.pos, true);
    this.pos += 4;
    return v;
  }
  u64() {
    const v = Number(this.dv.getBigUint64(this.pos, true));
    this.pos += 8;
    return v;
  }
  str() {
    const n = this.u64();
    const s = this.buf.subarray(this.pos, this.pos + n).toString('utf8');
    this.pos += n;
    return s;
  }
  /** Skips one metadata value of GGUF type `t`, returning it when scalar u32 / string (for the keys read here). */
  value(t) {
    const sizes = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
    if (t === 8) return this.str();
    if (t === 9) {
      const et = this.u32();
      const n = this.u64();
      for (let i = 0; i < n; i++) this.value(et);
      return undefined;
    }
    const v = t === 4 ? this.dv.getUint32(this.pos, true) : undefined;
    this.pos += sizes[t];
    return v;
  }
}

function main() {
  const [input, output, typeName] = process.argv.slice(2);
  const ei = process.argv.indexOf('--embed');
  const embedName = ei > 0 ? process.argv[ei + 1] : typeName;
  if (!input || !output || !TYPES[typeName] || !TYPES[embedName]) {
    console.error(
      `usage: requantize-gguf.mjs <in-f32.gguf> <out.gguf> <${Object.keys(TYPES).join('|')}> [--embed TYPE]`,
    );
    process.exit(2);
  }
  const buf = readFileSync(input);
  const r = new Reader(buf);
  if (r.u32() !== 0x46554747) throw new Error('not a GGUF file');
  const version = r.u32();
  const nTensors = r.u64();
  const nKv = r.u64();
  let alignment = 32;
  const kvs = [];
  for (let i = 0; i < nKv; i++) {
    const start = r.pos;
    const key = r.str();
    const t = r.u32();
    const v = r.value(t);
    if (key === 'general.alignment') alignment = v;
    if (key !== 'general.file_type') kvs.push(buf.subarray(start, r.pos));
  }
  const tensors = [];
  for (let i = 0; i < nTensors; i++) {
    const name = r.str();
    const nd = r.u32();
    const shape = Array.from({ length: nd }, () => r.u64());
    const type = r.u32();
    const offset = r.u64();
    if (type !== 0) throw new Error(`${name}: input must be all F32 (type ${type})`);
    tensors.push({ name, shape, offset });
  }
  const dataStart = Math.ceil(r.pos / alignment) * alignment;

  const lib = ggml();
  const out = [];
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    const src = new Float32Array(
      buf.buffer.slice(buf.byteOffset + dataStart + t.offset, buf.byteOffset + dataStart + t.offset + 4 * n),
    );
    let name = t.shape.length < 2 ? 'F32' : t.name === 'token_embd.weight' ? embedName : typeName;
    const row = t.shape[0];
    for (let guard = 0; guard < 3 && row % TYPES[name][1] !== 0; guard++)
      name = TYPES[name][1] === 256 ? 'IQ4_NL' : 'F16';
    const [id, qk, bytes] = TYPES[name];
    let data;
    if (name === 'F32') data = Buffer.from(src.buffer);
    else if (name === 'F16') {
      data = Buffer.alloc(2 * n);
      lib.fp32ToFp16Row(src, data, n);
    } else {
      const nRows = n / row;
      data = Buffer.alloc((n / qk) * bytes);
      // Synthetic importance: per column a deterministic weight in [0.5, 1.5) (fixed hash of the column index).
      const imatrix = Float32Array.from({ length: row }, (_, j) => 0.5 + (((j * 2654435761) >>> 0) % 1000) / 1000);
      lib.quantizeChunk(id, src, data, 0, nRows, row, imatrix);
    }
    out.push({ ...t, id, data });
  }

  // Write: header, KVs (+ general.file_type), tensor infos, aligned data.
  const parts = [];
  const u32 = (v) => {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    parts.push(b);
  };
  const u64 = (v) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    parts.push(b);
  };
  const str = (s) => {
    const b = Buffer.from(s, 'utf8');
    u64(b.length);
    parts.push(b);
  };
  u32(0x46554747);
  u32(version);
  u64(out.length);
  u64(kvs.length + 1);
  for (const kv of kvs) parts.push(kv);
  str('general.file_type');
  u32(4);
  u32(FILE_TYPE[typeName] ?? 0);
  let offset = 0;
  for (const t of out) {
    str(t.name);
    u32(t.shape.length);
    for (const d of t.shape) u64(d);
    u32(t.id);
    u64(offset);
    offset += Math.ceil(t.data.length / alignment) * alignment;
  }
  const size = parts.reduce((a, b) => a + b.length, 0);
  parts.push(Buffer.alloc(Math.ceil(size / alignment) * alignment - size));
  for (const t of out) {
    parts.push(t.data);
    parts.push(Buffer.alloc(Math.ceil(t.data.length / alignment) * alignment - t.data.length));
  }
  writeFileSync(output, Buffer.concat(parts));
  const counts = {};
  for (const t of out) {
    const n = Object.keys(TYPES).find((k) => TYPES[k][0] === t.id);
    counts[n] = (counts[n] ?? 0) + 1;
  }
  console.log(`${output}: ${JSON.stringify(counts)}`);
}

main();
