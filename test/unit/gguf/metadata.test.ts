/**
 * Typed metadata accessors: values of the right type come back, wrong types and missing keys are `gguf-invalid`
 * naming the key and the expected type, and `archKey` builds `{general.architecture}.{suffix}` keys.
 */

import { describe, expect, it } from 'vitest';
import {
  type GgufFile,
  archKey,
  getArchNumber,
  getArchitecture,
  getArray,
  getBoolean,
  getNumber,
  getNumberArray,
  getOptionalArchNumber,
  getOptionalArchPerLayer,
  getOptionalNumber,
  getOptionalString,
  getString,
  getStringArray,
  ggufType,
  hasKey,
  parseGguf,
  writeGguf,
} from '../../../src/gguf/index.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { parseGgufFile } from './gguf-test-kit.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';

async function file(): Promise<GgufFile> {
  const bytes = writeGguf({
    metadata: {
      'general.architecture': 'llama',
      'llama.context_length': 2048,
      'llama.attention.head_count_kv': [4, 4, 2],
      'llama.rope.freq_base': 10000,
      'general.big': 2n ** 60n,
      'general.small64': 42n,
      'tokenizer.ggml.tokens': ['a', 'b'],
      'tokenizer.ggml.add_bos_token': true,
      u64s: [1n, 2n],
    },
    metadataTypes: {
      'llama.rope.freq_base': ggufType.FLOAT32,
      'general.small64': ggufType.UINT64,
      u64s: ggufType.array(ggufType.UINT64),
    },
  });
  return parseGguf(new MemoryByteSource(bytes));
}

function expectInvalid(fn: () => unknown, message: RegExp): void {
  const e = thrownLlmError(fn);
  expect(e.code).toBe('gguf-invalid');
  expect(e.message).toMatch(message);
}

describe('metadata accessors', () => {
  it('reads typed values', async () => {
    const f = await file();
    expect(getArchitecture(f)).toBe('llama');
    expect(getNumber(f, 'llama.context_length')).toBe(2048);
    expect(getNumber(f, 'general.small64')).toBe(42);
    expect(getBoolean(f, 'tokenizer.ggml.add_bos_token')).toBe(true);
    expect(getStringArray(f, 'tokenizer.ggml.tokens')).toEqual(['a', 'b']);
    expect(getArray(f, 'llama.attention.head_count_kv')).toEqual(Int32Array.from([4, 4, 2]));
    expect(getNumberArray(f, 'u64s')).toEqual([1, 2]);
    expect(hasKey(f, 'general.name')).toBe(false);
    expect(getOptionalString(f, 'general.name')).toBeUndefined();
    expect(getOptionalNumber(f, 'llama.block_count')).toBeUndefined();
  });

  it('builds architecture keys', async () => {
    const f = await file();
    const key: `${string}.context_length` = archKey(f, 'context_length');
    expect(key).toBe('llama.context_length');
    expect(getArchNumber(f, 'rope.freq_base')).toBe(10000);
    expect(getOptionalArchNumber(f, 'expert_count')).toBeUndefined();
    expect(getOptionalArchPerLayer(f, 'attention.head_count_kv', 3)).toEqual([4, 4, 2]);
    expect(getOptionalArchPerLayer(f, 'context_length', 2)).toEqual([2048, 2048]);
    expectInvalid(
      () => getOptionalArchPerLayer(f, 'attention.head_count_kv', 5),
      /3 entries, expected one per layer \(5\)/,
    );
  });

  it('names the key and the expected type on errors', async () => {
    const f = await file();
    expectInvalid(
      () => getString(f, 'llama.context_length'),
      /"llama.context_length" has type UINT32, expected STRING/,
    );
    expectInvalid(() => getNumber(f, 'general.name'), /"general.name" is missing \(expected a number\)/);
    expectInvalid(() => getNumber(f, 'general.big'), /within ±2\^53/);
    expectInvalid(() => getStringArray(f, 'llama.attention.head_count_kv'), /expected ARRAY<STRING>/);
    expectInvalid(() => getBoolean(f, 'tokenizer.ggml.tokens'), /has type ARRAY<STRING>, expected BOOL/);
    expectInvalid(
      () => getArchNumber({ metadata: Object.create(null), metadataTypes: Object.create(null) }, 'context_length'),
      /general.architecture/,
    );
  });

  it('does not see inherited properties as keys', async () => {
    const f = await file();
    expect(hasKey(f, 'constructor')).toBe(false);
    expect(hasKey(f, 'toString')).toBe(false);
    expectInvalid(() => getString(f, '__proto__'), /missing/);
  });

  it('reads the hyper-parameters of a real model', async () => {
    const f = await parseGgufFile(sharedPath('models', 'stories260K.gguf'));
    expect(getArchNumber(f, 'embedding_length')).toBe(64);
    expect(getArchNumber(f, 'block_count')).toBe(5);
    expect(getArchNumber(f, 'attention.head_count')).toBe(8);
    expect(getArchNumber(f, 'attention.head_count_kv')).toBe(4);
    expect(getArchNumber(f, 'attention.layer_norm_rms_epsilon')).toBeCloseTo(1e-5, 10);
    expect(getStringArray(f, 'tokenizer.ggml.tokens')).toHaveLength(512);
  });
});
