/**
 * The quant registry: every listed type is reachable by id with ggml's geometry, unsupported and unknown types raise
 * LlmError('unsupported-type') naming the type, and tensorByteLength / dequantize validate their inputs.
 */

import { describe, expect, it } from 'vitest';
import { GGML_TYPES, GgmlType } from '../../../src/gguf/types.js';
import {
  DEQUANTIZE_ONLY,
  dequantize,
  getQuantType,
  isSupportedType,
  QUANT_TYPES,
  tensorByteLength,
} from '../../../src/quant/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const thrown = thrownLlmError;

describe('quant registry', () => {
  it('lists the 23 required types with ggml geometry', () => {
    const names = QUANT_TYPES.map((t) => t.name).sort();
    expect(names).toEqual(
      [
        'BF16',
        'F16',
        'F32',
        'IQ1_M',
        'IQ1_S',
        'IQ2_S',
        'IQ2_XS',
        'IQ2_XXS',
        'IQ3_S',
        'IQ3_XXS',
        'IQ4_NL',
        'IQ4_XS',
        'MXFP4',
        'Q2_K',
        'Q3_K',
        'Q4_0',
        'Q4_1',
        'Q4_K',
        'Q5_0',
        'Q5_1',
        'Q5_K',
        'Q6_K',
        'Q8_0',
      ].sort(),
    );
    for (const t of QUANT_TYPES) {
      const info = GGML_TYPES.get(t.id)!;
      expect(getQuantType(t.id)).toBe(t);
      expect(t.name).toBe(info.name);
      expect([t.blockElements, t.blockBytes]).toEqual([info.blockElements, info.blockBytes]);
      expect(isSupportedType(t.id)).toBe(true);
    }
    expect(QUANT_TYPES.map((t) => t.id)).toEqual([...QUANT_TYPES.map((t) => t.id)].sort((a, b) => a - b));
  });

  it('every type has its reference quantizer except exactly the dequantize-only IQ1–IQ3 codebook types', () => {
    const readOnly = QUANT_TYPES.filter((t) => t.quantizeRow === undefined).map((t) => t.name);
    expect(readOnly.sort()).toEqual(['IQ1_M', 'IQ1_S', 'IQ2_S', 'IQ2_XS', 'IQ2_XXS', 'IQ3_S', 'IQ3_XXS']);
    expect([...DEQUANTIZE_ONLY].map((id) => getQuantType(id).name).sort()).toEqual(readOnly);
    for (const t of QUANT_TYPES) expect(typeof t.quantizeRow === 'function', t.name).toBe(!DEQUANTIZE_ONLY.has(t.id));
  });

  it('an unsupported type names itself in LlmError(unsupported-type)', () => {
    const e = thrown(() => getQuantType(GgmlType.TQ1_0));
    expect(e.code).toBe('unsupported-type');
    expect(e.message).toContain('TQ1_0');
    expect(e.details?.type).toBe('TQ1_0');
    const u = thrown(() => getQuantType(99 as GgmlType));
    expect(u.code).toBe('unsupported-type');
    expect(u.message).toContain('99');
    expect(isSupportedType(GgmlType.TQ2_0)).toBe(false);
    expect(isSupportedType(GgmlType.Q8_K)).toBe(false);
  });

  it('tensorByteLength follows block geometry and rejects partial blocks', () => {
    expect(tensorByteLength(GgmlType.Q4_0, [64, 3])).toBe(2 * 18 * 3);
    expect(tensorByteLength(GgmlType.Q6_K, [512, 2])).toBe(2 * 210 * 2);
    expect(tensorByteLength(GgmlType.F32, [7])).toBe(28);
    expect(tensorByteLength(GgmlType.TQ2_0, [256])).toBe(66); // sizes of unsupported-but-known types still work
    expect(tensorByteLength(GgmlType.MXFP4, [64, 3])).toBe(2 * 17 * 3);
    expect(tensorByteLength(GgmlType.IQ1_M, [512])).toBe(2 * 56);
    expect(thrown(() => tensorByteLength(GgmlType.Q4_K, [100, 2])).code).toBe('gguf-invalid');
    expect(thrown(() => tensorByteLength(1234 as GgmlType, [32])).code).toBe('unsupported-type');
  });

  it('dequantize validates the element count and the source length', () => {
    expect(thrown(() => dequantize(GgmlType.Q4_0, new Uint8Array(18), 31)).code).toBe('invalid-request');
    const short = thrown(() => dequantize(GgmlType.Q8_0, new Uint8Array(33), 32));
    expect(short.code).toBe('invalid-request');
    expect(short.message).toContain('Q8_0');
    // d = 1.0 (f16 0x3C00); each byte 0x98: element j = 8 − 8 = 0, element j+16 = 9 − 8 = 1
    const y = dequantize(GgmlType.Q4_0, new Uint8Array([0x00, 0x3c, ...new Array<number>(16).fill(0x98)]), 32);
    expect([y[0], y[15], y[16], y[31]]).toEqual([0, 0, 1, 1]);
  });
});
