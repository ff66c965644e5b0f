/**
 * Structural fuzz through the tokenizer (complements fuzz-structural.test.ts): a seeded corpus of hostile-but-well-formed headers, each changing the *structure* a reader
 * trusts — a count the model config sizes things by, a tensor's dimensions (overflowing products, zero, too many),
 * the alignment, array nesting and element types — then every file goes the whole way a header goes before any
 * download: `parseGguf` → `readModelConfig` → `createTokenizer`. Every outcome must be a result that respects the file
 * or an `LlmError` with a code of the failing layer, within a time bound — never another exception, a crash or a hang.
 * Byte-level mutations live in `fuzz.test.ts`; this corpus is generated at test time from stories260K and seeds
 * (no fixture is committed). `WEBGGUF_FUZZ_CASES` (default 10,000) scales the random combinations to a tenth of it;
 * `WEBGGUF_FUZZ_SEED` picks the seed.
 */

import { describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../../src/errors.js';
import { LlmError } from '../../../src/errors.js';
import {
  type GgufFile,
  GgufValueType,
  type GgufValue,
  type GgufValueTypeInfo,
  parseGguf,
  writeGguf,
} from '../../../src/gguf/index.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { readModelConfig } from '../../../src/model/load.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import { mulberry32 } from '../../helpers/mulberry32.js';
import { sharedPath } from '../../helpers/shared-path.js';
import { RawGguf, fixtureBytes } from './gguf-test-kit.js';

const CASES = Number(process.env.WEBGGUF_FUZZ_CASES ?? 10_000);
const SEED = Number(process.env.WEBGGUF_FUZZ_SEED ?? 0x5eed);
/** Random combinations per run: a tenth of the byte-level case count. */
const COMBINATIONS = Math.max(100, Math.floor(CASES / 10));
/** A case taking longer than this is a hang. */
const CASE_TIMEOUT_MS = 5_000;

/** Codes each stage may fail with; anything else (or a non-LlmError) fails the corpus. */
const ALLOWED: Readonly<Record<'parse' | 'config' | 'tokenizer', readonly ErrorCode[]>> = {
  parse: ['gguf-invalid'],
  config: ['gguf-invalid', 'unsupported-arch', 'unsupported-type'],
  tokenizer: ['tokenizer', 'gguf-invalid'],
};

const t = (type: GgufValueType): GgufValueTypeInfo => ({ type }) as GgufValueTypeInfo;
const arrayOf = (element: GgufValueTypeInfo): GgufValueTypeInfo => ({ type: GgufValueType.ARRAY, element });

/** A value with its stored type. */
type Typed = readonly [GgufValue, GgufValueTypeInfo];

/** Hostile values for a count: zero, one, off-by-one, 32/53/64-bit edges, negatives, fractions, wrong types, arrays. */
const COUNT_VALUES: readonly Typed[] = [
  [0, t(GgufValueType.UINT32)],
  [1, t(GgufValueType.UINT32)],
  [3, t(GgufValueType.UINT32)],
  [6, t(GgufValueType.UINT32)],
  [513, t(GgufValueType.UINT32)],
  [65_536, t(GgufValueType.UINT32)],
  [2 ** 40, t(GgufValueType.UINT64)],
  [2n ** 53n + 1n, t(GgufValueType.UINT64)],
  [2n ** 64n - 1n, t(GgufValueType.UINT64)],
  [-1, t(GgufValueType.INT32)],
  [-(2n ** 63n), t(GgufValueType.INT64)],
  [0.5, t(GgufValueType.FLOAT32)],
  [NaN, t(GgufValueType.FLOAT32)],
  [Infinity, t(GgufValueType.FLOAT64)],
  ['8', t(GgufValueType.STRING)],
  [true, t(GgufValueType.BOOL)],
  [[8, 8, 8, 8, 8], arrayOf(t(GgufValueType.UINT32))],
  [[1, 2, 3], arrayOf(t(GgufValueType.UINT32))],
  [[], arrayOf(t(GgufValueType.UINT32))],
  [Array.from({ length: 100_000 }, (_, i) => i), arrayOf(t(GgufValueType.UINT32))],
  [[['x']], arrayOf(arrayOf(t(GgufValueType.STRING)))],
];

/** stories260K's keys that size things (the model config, the vocabulary) or pick code paths. */
const COUNT_KEYS = [
  'llama.block_count',
  'llama.embedding_length',
  'llama.feed_forward_length',
  'llama.attention.head_count',
  'llama.attention.head_count_kv',
  'llama.attention.key_length',
  'llama.attention.value_length',
  'llama.context_length',
  'llama.rope.dimension_count',
  'llama.vocab_size',
  'llama.expert_count',
  'llama.expert_used_count',
  'llama.attention.layer_norm_rms_epsilon',
  'llama.rope.freq_base',
  'llama.rope.scaling.factor',
  'llama.rope.scaling.original_context_length',
  'llama.attention.sliding_window',
  'tokenizer.ggml.bos_token_id',
  'tokenizer.ggml.eos_token_id',
  'tokenizer.ggml.unknown_token_id',
  'tokenizer.ggml.padding_token_id',
] as const;

/** Hostile values for the vocabulary arrays: wrong element types, wrong lengths, nesting. */
const VOCAB_VALUES: Readonly<Record<string, readonly Typed[]>> = {
  'tokenizer.ggml.tokens': [
    [[], arrayOf(t(GgufValueType.STRING))],
    [['<unk>'], arrayOf(t(GgufValueType.STRING))],
    [Array.from({ length: 513 }, (_, i) => `t${i}`), arrayOf(t(GgufValueType.STRING))],
    [Array.from({ length: 512 }, () => 'same'), arrayOf(t(GgufValueType.STRING))],
    [Array.from({ length: 512 }, (_, i) => i), arrayOf(t(GgufValueType.UINT32))],
    [[['a'], ['b']], arrayOf(arrayOf(t(GgufValueType.STRING)))],
    ['tokens', t(GgufValueType.STRING)],
  ],
  'tokenizer.ggml.scores': [
    [[], arrayOf(t(GgufValueType.FLOAT32))],
    [Array.from({ length: 512 }, () => NaN), arrayOf(t(GgufValueType.FLOAT32))],
    [Array.from({ length: 512 }, () => 'x'), arrayOf(t(GgufValueType.STRING))],
    [Array.from({ length: 100_000 }, () => 0), arrayOf(t(GgufValueType.FLOAT32))],
  ],
  'tokenizer.ggml.token_type': [
    [Array.from({ length: 512 }, () => 2 ** 31 - 1), arrayOf(t(GgufValueType.INT32))],
    [Array.from({ length: 512 }, () => -7), arrayOf(t(GgufValueType.INT32))],
    [Array.from({ length: 511 }, () => 1), arrayOf(t(GgufValueType.INT32))],
    [[true, false], arrayOf(t(GgufValueType.BOOL))],
  ],
  'tokenizer.ggml.model': [
    ['gpt2', t(GgufValueType.STRING)],
    ['bert', t(GgufValueType.STRING)],
    ['none', t(GgufValueType.STRING)],
    ['', t(GgufValueType.STRING)],
    [7, t(GgufValueType.UINT32)],
  ],
  'tokenizer.ggml.merges': [
    [['a b', 'b c'], arrayOf(t(GgufValueType.STRING))],
    [['no-space'], arrayOf(t(GgufValueType.STRING))],
    [[1, 2], arrayOf(t(GgufValueType.UINT32))],
  ],
  'general.architecture': [
    ['', t(GgufValueType.STRING)],
    ['llama\u0000', t(GgufValueType.STRING)],
    ['__proto__', t(GgufValueType.STRING)],
    ['constructor', t(GgufValueType.STRING)],
    [7, t(GgufValueType.UINT32)],
    [['llama'], arrayOf(t(GgufValueType.STRING))],
  ],
};

/** Alignment values: non-powers of two, zero, past the limit, 64-bit, signed, float, string, array, narrow ints. */
const ALIGNMENT_VALUES: readonly Typed[] = [
  [0, t(GgufValueType.UINT32)],
  [1, t(GgufValueType.UINT32)],
  [3, t(GgufValueType.UINT32)],
  [48, t(GgufValueType.UINT32)],
  [64, t(GgufValueType.UINT32)],
  [1 << 20, t(GgufValueType.UINT32)],
  [1 << 21, t(GgufValueType.UINT32)],
  [2 ** 31, t(GgufValueType.UINT32)],
  [2n ** 40n, t(GgufValueType.UINT64)],
  [-32, t(GgufValueType.INT32)],
  [32, t(GgufValueType.FLOAT32)],
  [32, t(GgufValueType.UINT8)],
  [32, t(GgufValueType.UINT16)],
  ['32', t(GgufValueType.STRING)],
  [true, t(GgufValueType.BOOL)],
  [[32], arrayOf(t(GgufValueType.UINT32))],
];

/** A value nested `depth` arrays deep around `inner`. */
function nested(depth: number, inner: Typed): Typed {
  let v = inner;
  for (let i = 0; i < depth; i++) v = [[v[0]], arrayOf(v[1])];
  return v;
}

/** Nesting: depth 1–12 around a number, a string and an empty array, and mismatched siblings. */
const NESTING_VALUES: readonly Typed[] = [
  ...Array.from({ length: 12 }, (_, d) => nested(d + 1, [7, t(GgufValueType.UINT8)])),
  ...Array.from({ length: 12 }, (_, d) => nested(d + 1, ['s', t(GgufValueType.STRING)])),
  nested(3, [[], arrayOf(t(GgufValueType.UINT8))]),
];

/** A metadata edit: set (or delete, with `undefined`) keys of stories260K. */
type MetaEdit = Readonly<Record<string, Typed | undefined>>;

/** stories260K parsed once, with its tensor data, to rewrite with edits. */
interface Base {
  readonly file: GgufFile;
  readonly bytes: Uint8Array;
}

/** Stand-in key of the same length as `general.alignment`: the writer lays data out with the default alignment. */
const ALIGNMENT_STAND_IN = 'general.alignmenz';

/**
 * stories260K with `edit` applied. A hostile `general.alignment` is written under a stand-in key (the writer refuses
 * it) whose name is then patched back, so the file claims an alignment its data layout does not follow.
 */
function rewrite(base: Base, edit: MetaEdit): Uint8Array {
  const alignment = edit['general.alignment'];
  if (alignment !== undefined) {
    const rest = { ...edit, 'general.alignment': undefined, [ALIGNMENT_STAND_IN]: alignment };
    const bytes = rewriteMetadata(base, rest);
    const needle = new TextEncoder().encode(ALIGNMENT_STAND_IN);
    const at = indexOf(bytes, needle);
    bytes[at + needle.length - 1] = 0x74; // 'z' → 't'
    return bytes;
  }
  return rewriteMetadata(base, edit);
}

/** First offset of `needle` in `haystack`. */
function indexOf(haystack: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  throw new Error('stand-in key not found');
}

function rewriteMetadata(base: Base, edit: MetaEdit): Uint8Array {
  const metadata: Record<string, GgufValue> = {};
  const metadataTypes: Record<string, GgufValueTypeInfo> = {};
  for (const [k, v] of Object.entries(base.file.metadata)) {
    metadata[k] = v;
    metadataTypes[k] = base.file.metadataTypes[k];
  }
  for (const [k, v] of Object.entries(edit)) {
    if (v === undefined) {
      delete metadata[k];
      delete metadataTypes[k];
    } else {
      metadata[k] = v[0];
      metadataTypes[k] = v[1];
    }
  }
  const f = base.file;
  const tensors = f.tensors.map((x) => ({
    name: x.name,
    type: x.type,
    shape: x.shape,
    data: base.bytes.subarray(f.tensorDataOffset + x.offset, f.tensorDataOffset + x.offset + x.byteLength),
  }));
  return writeGguf({ version: f.version, metadata, metadataTypes, tensors });
}

/** Dimension lists that overflow, vanish or exceed ggml's four; each goes into one tensor info. */
const DIMS: readonly (readonly bigint[])[] = [
  [0n],
  [32n, 0n],
  [2n ** 32n, 2n ** 32n],
  [2n ** 31n, 2n ** 31n, 2n ** 31n],
  [2n ** 53n],
  [2n ** 53n + 1n],
  [2n ** 63n],
  [2n ** 64n - 1n],
  [2n ** 26n, 2n ** 26n, 2n ** 2n],
  [32n, 32n, 32n, 32n, 32n],
  [],
  [33n],
  [64n, 3n],
];

/** Tensor type ids: valid, removed from ggml (4, 5), unknown, huge. */
const TYPE_IDS = [0, 1, 2, 4, 5, 8, 39, 40, 1000, 0xffffffff];

/** A one-tensor header (plus an 8-byte data region) with `dims`, `typeId` and `offset`. */
function tensorHeader(dims: readonly bigint[], typeId: number, offset: bigint): Uint8Array {
  const r = new RawGguf().header(3, 1, 1).str('general.architecture').u32(GgufValueType.STRING).str('llama');
  r.str('w').u32(dims.length);
  for (const d of dims) r.u64(d);
  r.u32(typeId).u64(offset);
  return r.align(32).zeros(64).build();
}

/** One corpus entry: how to make its bytes, named for the report. */
interface CorpusCase {
  readonly name: string;
  readonly bytes: () => Uint8Array;
}

function corpus(base: Base): CorpusCase[] {
  const out: CorpusCase[] = [];
  for (const key of COUNT_KEYS) {
    for (const [i, v] of COUNT_VALUES.entries())
      out.push({ name: `count ${key} #${i}`, bytes: () => rewrite(base, { [key]: v }) });
    out.push({ name: `count ${key} deleted`, bytes: () => rewrite(base, { [key]: undefined }) });
  }
  for (const [key, values] of Object.entries(VOCAB_VALUES)) {
    for (const [i, v] of values.entries())
      out.push({ name: `vocab ${key} #${i}`, bytes: () => rewrite(base, { [key]: v }) });
    out.push({ name: `vocab ${key} deleted`, bytes: () => rewrite(base, { [key]: undefined }) });
  }
  for (const [i, v] of ALIGNMENT_VALUES.entries())
    out.push({ name: `alignment #${i}`, bytes: () => rewrite(base, { 'general.alignment': v }) });
  for (const [i, v] of NESTING_VALUES.entries()) {
    out.push({ name: `nesting fuzz.nested #${i}`, bytes: () => rewrite(base, { 'fuzz.nested': v }) });
    out.push({
      name: `nesting tokenizer.ggml.tokens #${i}`,
      bytes: () => rewrite(base, { 'tokenizer.ggml.tokens': v }),
    });
  }
  for (const [i, dims] of DIMS.entries()) {
    for (const typeId of TYPE_IDS) {
      for (const offset of [0n, 32n, 1n, 2n ** 53n - 1n, 2n ** 64n - 1n]) {
        out.push({
          name: `dims #${i} type ${typeId} offset ${offset}`,
          bytes: () => tensorHeader(dims, typeId, offset),
        });
      }
    }
  }
  return out;
}

/** Random combinations of two to four corpus edits on the same file. */
function combination(base: Base, rnd: () => number): CorpusCase {
  const pools: [string, readonly Typed[]][] = [
    ...COUNT_KEYS.map((k): [string, readonly Typed[]] => [k, COUNT_VALUES]),
    ...Object.entries(VOCAB_VALUES),
    ['general.alignment', ALIGNMENT_VALUES],
    ['fuzz.nested', NESTING_VALUES],
  ];
  const edit: Record<string, Typed> = {};
  const n = 2 + Math.floor(rnd() * 3);
  for (let i = 0; i < n; i++) {
    const [key, values] = pools[Math.floor(rnd() * pools.length)];
    edit[key] = values[Math.floor(rnd() * values.length)];
  }
  return { name: `combination ${Object.keys(edit).join(' + ')}`, bytes: () => rewrite(base, edit) };
}

/** Runs one file through parse → config → tokenizer; returns the outcome, throws on a forbidden one. */
async function runCase(c: CorpusCase): Promise<string> {
  let stage: keyof typeof ALLOWED = 'parse';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`case hung for ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
  });
  const run = async (): Promise<string> => {
    const bytes = c.bytes();
    const file = await parseGguf(new MemoryByteSource(bytes));
    for (const x of file.tensors) {
      if (x.offset % file.alignment !== 0 || file.tensorDataOffset + x.offset + x.byteLength > bytes.length) {
        throw new Error(`parsed tensor ${x.name} lies outside the file or is misaligned`);
      }
    }
    stage = 'config';
    const config = readModelConfig(file);
    for (const [k, v] of Object.entries(config)) {
      if (typeof v === 'number' && !Number.isFinite(v)) throw new Error(`config.${k} is ${v}`);
    }
    for (const k of ['nLayers', 'nHeads', 'nKvHeads', 'headDim', 'embeddingLength', 'ffnDim', 'vocabSize'] as const) {
      if (!Number.isSafeInteger(config[k]) || config[k] < 1) throw new Error(`config.${k} is ${config[k]}`);
    }
    stage = 'tokenizer';
    createTokenizer(file.metadata).encode('Once upon a time');
    return 'loaded';
  };
  try {
    return await Promise.race([run(), hang]);
  } catch (e) {
    if (e instanceof LlmError && ALLOWED[stage].includes(e.code) && e.message.length > 0 && e.message.length < 2000)
      return `${stage}:${e.code}`;
    throw new Error(
      `structural fuzz case '${c.name}' failed at ${stage} with ${e instanceof LlmError ? `LlmError(${e.code})` : 'a non-LlmError'}: ${String(e)}`,
      { cause: e },
    );
  } finally {
    clearTimeout(timer);
  }
}

describe('GGUF structural fuzz (parse → model config → tokenizer)', () => {
  it(`survives the structural corpus and ${COMBINATIONS} random combinations (seed ${SEED})`, async () => {
    const bytes = fixtureBytes(sharedPath('models', 'stories260K.gguf'));
    const base: Base = { file: await parseGguf(new MemoryByteSource(bytes)), bytes };
    const rnd = mulberry32(SEED);
    const cases = [...corpus(base), ...Array.from({ length: COMBINATIONS }, () => combination(base, rnd))];
    const outcomes: Record<string, number> = {};
    const failures: string[] = [];
    const started = performance.now();
    for (const c of cases) {
      try {
        const outcome = await runCase(c);
        outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      } catch (e) {
        failures.push((e as Error).message.slice(0, 300));
      }
    }
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    console.log(
      `gguf structural fuzz: ${cases.length} cases in ${seconds} s (seed ${SEED}): ${JSON.stringify(outcomes)}`,
    );
    expect(failures.slice(0, 20), `${failures.length} of ${cases.length} cases failed`).toEqual([]);
    expect(Object.values(outcomes).reduce((a, b) => a + b, 0)).toBe(cases.length);
    expect(outcomes['parse:gguf-invalid'] ?? 0).toBeGreaterThan(0);
    expect(outcomes['config:gguf-invalid'] ?? 0).toBeGreaterThan(0);
    expect(outcomes['loaded'] ?? 0).toBeGreaterThan(0);
  });
});
