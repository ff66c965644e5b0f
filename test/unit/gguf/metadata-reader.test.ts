/**
 * The one typed metadata reader (src/gguf/metadata-reader.ts), used by the model config and the tokenizer: values of
 * the right type come back, wrong types and missing keys are an `LlmError` with the caller's code naming the key and
 * what was found, `archKey` prefixes `{general.architecture}.`, and inherited properties are never keys.
 */

import { describe, expect, it } from 'vitest';
import { type GgufFile, ggufType, MetadataReader, parseGguf, writeGguf } from '../../../src/gguf/index.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { parseGgufFile } from './gguf-test-kit.js';

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

const reader = (f: GgufFile, code: 'gguf-invalid' | 'tokenizer' = 'gguf-invalid'): MetadataReader =>
  new MetadataReader(f.metadata, { code, context: 'reading test' }, 'llama');

function expectError(fn: () => unknown, code: string, message: RegExp): void {
  const e = thrownLlmError(fn);
  expect(e.code).toBe(code);
  expect(e.message).toMatch(message);
}

describe('MetadataReader', () => {
  it('reads typed values, with defaults for absent keys', async () => {
    const r = reader(await file());
    expect(r.string('general.architecture')).toBe('llama');
    expect(r.count('llama.context_length')).toBe(2048);
    expect(r.count('general.small64')).toBe(42);
    expect(r.optionalBool('tokenizer.ggml.add_bos_token')).toBe(true);
    expect(r.optionalStringArray('tokenizer.ggml.tokens')).toEqual(['a', 'b']);
    expect(Array.from(r.optionalNumbers('u64s')!)).toEqual([1, 2]);
    expect(r.arrayLength('tokenizer.ggml.tokens')).toBe(2);
    expect(r.has('general.name')).toBe(false);
    expect(r.optionalString('general.name')).toBeUndefined();
    expect(r.count('llama.block_count', 7)).toBe(7);
  });

  it('builds architecture keys and reads per-layer values', async () => {
    const r = reader(await file());
    expect(r.archKey('context_length')).toBe('llama.context_length');
    expect(r.finite(r.archKey('rope.freq_base'), 1, { min: 0 }, 'the rope base')).toBe(10000);
    expect(r.boundedCounts(r.archKey('attention.head_count_kv'), undefined, 3, 1, 64, 'maxHeads')).toEqual([4, 4, 2]);
    expect(r.boundedCounts(r.archKey('context_length'), undefined, 2, 1, 1e6, 'maxContextLength')).toEqual([
      2048, 2048,
    ]);
    expectError(
      () => r.boundedCounts(r.archKey('attention.head_count_kv'), undefined, 5, 1, 64, 'maxHeads'),
      'gguf-invalid',
      /llama\.attention\.head_count_kv/,
    );
  });

  it("names the key and what was found, with the caller's error code", async () => {
    const f = await file();
    expectError(() => reader(f).string('llama.context_length'), 'gguf-invalid', /'llama\.context_length'/);
    expectError(() => reader(f, 'tokenizer').count('general.name'), 'tokenizer', /general\.name/);
    expectError(() => reader(f).count('general.big'), 'gguf-invalid', /general\.big/);
    expectError(() => reader(f).optionalStringArray('llama.attention.head_count_kv'), 'gguf-invalid', /strings/);
    expectError(() => reader(f).optionalBool('tokenizer.ggml.tokens'), 'gguf-invalid', /tokenizer\.ggml\.tokens/);
  });

  it('does not see inherited properties as keys', async () => {
    const r = reader(await file());
    expect(r.has('constructor')).toBe(false);
    expect(r.has('toString')).toBe(false);
    expect(r.optionalString('__proto__')).toBeUndefined();
    expectError(() => r.string('__proto__'), 'gguf-invalid', /__proto__/);
  });

  it('reads the hyper-parameters of a real model', async () => {
    const f = await parseGgufFile(sharedPath('models', 'stories260K.gguf'));
    const r = reader(f);
    expect(r.count(r.archKey('embedding_length'))).toBe(64);
    expect(r.count(r.archKey('block_count'))).toBe(5);
    expect(r.count(r.archKey('attention.head_count'))).toBe(8);
    expect(r.count(r.archKey('attention.head_count_kv'))).toBe(4);
    expect(r.finite(r.archKey('attention.layer_norm_rms_epsilon'), 0, {}, 'eps')).toBeCloseTo(1e-5, 10);
    expect(r.arrayLength('tokenizer.ggml.tokens')).toBe(512);
  });
});
