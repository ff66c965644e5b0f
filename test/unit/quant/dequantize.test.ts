/**
 * Dequantization is bit-exact with ggml: every type's golden vectors (ggml's dequantize_row_* on random blocks) are
 * reproduced bit for bit, F16 over all 65,536 values, and every tensor of every ../shared fixture dequantizes to
 * finite values.
 */

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { GgmlType } from '../../../src/gguf/types.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { dequantize, getQuantType, QUANT_TYPES, tensorByteLength } from '../../../src/quant/index.js';
import { firstBitDiff, loadVectors } from './quant-vectors.js';

describe('dequantizeRow is bit-exact with ggml (golden vectors)', () => {
  for (const t of QUANT_TYPES) {
    it(t.name, () => {
      const v = loadVectors(t.name);
      const out = new Float32Array(v.dequantize.nElements);
      t.dequantizeRow(v.dequantize.blocks, out, v.dequantize.nElements);
      expect(firstBitDiff(new Uint32Array(out.buffer), v.dequantize.expectedBits)).toBeNull();
    });
  }

  it('F16: all 65,536 values match ggml_fp16_to_fp32_row (sha256)', () => {
    const v = loadVectors('F16');
    const all = new Uint16Array(65536).map((_, i) => i);
    const out = new Float32Array(65536);
    getQuantType(GgmlType.F16).dequantizeRow(new Uint8Array(all.buffer), out, 65536);
    expect(createHash('sha256').update(new Uint8Array(out.buffer)).digest('hex')).toBe(v.dequantizeAllSha256);
  });

  it('dequantizes at a non-zero byte offset (unaligned views)', () => {
    const v = loadVectors('Q4_K');
    const shifted = new Uint8Array(v.dequantize.blocks.length + 3);
    shifted.set(v.dequantize.blocks, 3);
    const out = new Float32Array(v.dequantize.nElements);
    getQuantType(GgmlType.Q4_K).dequantizeRow(shifted.subarray(3), out, v.dequantize.nElements);
    expect(firstBitDiff(new Uint32Array(out.buffer), v.dequantize.expectedBits)).toBeNull();
  });
});

describe('every tensor of every ../shared fixture dequantizes', () => {
  const modelsDir = path.resolve(fileURLToPath(new URL('../../../', import.meta.url)), '..', 'shared', 'models');
  const files = existsSync(modelsDir) ? findGguf(modelsDir) : [];
  it('finds the fixtures', () => {
    expect(files.length).toBeGreaterThan(10);
  });
  for (const file of files) {
    it(path.relative(modelsDir, file), async () => {
      const bytes = new Uint8Array(readFileSync(file));
      const gguf = await parseGguf(new MemoryByteSource(bytes));
      for (const t of gguf.tensors) {
        expect(tensorByteLength(t.type, t.shape)).toBe(t.byteLength);
        const start = gguf.tensorDataOffset + t.offset;
        const out = dequantize(t.type, bytes.subarray(start, start + t.byteLength), t.nElements);
        let finite = true;
        for (let i = 0; i < out.length; i++) if (!Number.isFinite(out[i])) finite = false;
        expect(finite, `${t.name} (${getQuantType(t.type).name}) has non-finite values`).toBe(true);
      }
    });
  }
});

function findGguf(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...findGguf(p));
    else if (e.name.endsWith('.gguf')) out.push(p);
  }
  return out.sort();
}
