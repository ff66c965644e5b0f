import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { modelFactsOf } from '../../../src/api/model-facts.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { GgmlType, type GgufFile, type GgufTensorInfo } from '../../../src/gguf/types.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { sharedPath } from '../../helpers/shared-path.js';

const tensor = (name: string, type: GgmlType, shape: number[]): GgufTensorInfo => ({
  name,
  type,
  shape,
  offset: 0,
  byteLength: 0,
  nElements: shape.reduce((a, b) => a * b, 1),
});
const file = (tensors: GgufTensorInfo[]): GgufFile => ({ tensors }) as unknown as GgufFile;

describe('modelFactsOf', () => {
  it('counts every element and names the type of most matrix weights', async () => {
    const gguf = await parseGguf(
      new MemoryByteSource(new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')))),
    );
    const facts = modelFactsOf(gguf);
    expect(facts.parameterCount).toBe(gguf.tensors.reduce((a, t) => a + t.nElements, 0));
    expect(facts.parameterCount).toBeGreaterThan(250_000);
    expect(facts.quantization).toBe('F32');
  });

  it('says (mixed) when other types hold over a tenth of the matrices; vectors do not count', () => {
    const mixed = file([
      tensor('a.weight', GgmlType.Q4_K, [256, 80]),
      tensor('b.weight', GgmlType.Q6_K, [256, 20]),
      tensor('norm.weight', GgmlType.F32, [256]),
    ]);
    expect(modelFactsOf(mixed)).toEqual({ parameterCount: 256 * 101, quantization: 'Q4_K (mixed)' });
    const pure = file([tensor('a.weight', GgmlType.Q8_0, [64, 64]), tensor('n.weight', GgmlType.F32, [64])]);
    expect(modelFactsOf(pure).quantization).toBe('Q8_0');
    expect(modelFactsOf(file([])).quantization).toBe('none');
  });
});
