/**
 * Structural fuzz corpus (issue #21): seeded headers built field by field, each with one category of structural lie —
 * counts (tensor count, kv count, array lengths, string lengths, model hyper-parameters), dims (product beyond 2^53,
 * zero dims, n_dims beyond 4), alignment (0, non-power-of-two, huge, wrong type), nesting (arrays of arrays, deep,
 * mixed), tensor offsets and type ids. Every case must end as a parsed file (whose model config then reads cleanly or
 * fails with an `LlmError`) or as `LlmError('gguf-invalid')` — never another exception, a hang or a crash.
 * Same knobs as fuzz.test.ts: WEBGGUF_FUZZ_CASES (CI: 10,000; nightly: 100,000) and WEBGGUF_FUZZ_SEED.
 */

import { describe, expect, it } from 'vitest';
import { LlmError } from '../../../src/errors.js';
import { GgmlType, GgufValueType, parseGguf } from '../../../src/gguf/index.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { readModelConfig } from '../../../src/model/load.js';
import { mulberry32 } from '../../helpers/mulberry32.js';
import { RawGguf } from './gguf-test-kit.js';

const CASES = Number(process.env.WEBGGUF_FUZZ_CASES ?? 10_000);
const SEED = Number(process.env.WEBGGUF_FUZZ_SEED ?? 0x5eed);
const CASE_TIMEOUT_MS = 5_000;

const CATEGORIES = ['counts', 'dims', 'alignment', 'nesting', 'offsets', 'types', 'hparams', 'none'] as const;
type Category = (typeof CATEGORIES)[number];

const HUGE_U64 = [2n ** 64n - 1n, 2n ** 63n, 2n ** 53n + 1n, 2n ** 40n, 2n ** 32n, 2n ** 31n];

/** Draws one case: its bytes and what it lies about. */
function buildCase(rnd: () => number): { bytes: Uint8Array; category: Category } {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const category = pick(CATEGORIES);
  // Each site of the drawn category lies with this probability (so a case usually holds one or two lies).
  const lie = (c: Category): boolean => category === c && rnd() < 0.35;
  const int = (n: number): number => Math.floor(rnd() * n);
  const r = new RawGguf();

  // A tiny complete llama (n_embd 8, 2 heads of 4, n_ff 16, 8 tokens) that the lies are applied to.
  const layers = 1 + int(3);
  const embd = 8;
  const ffn = 16;
  const tensors: { name: string; shape: (number | bigint)[]; type: number }[] = [
    { name: 'token_embd.weight', shape: [embd, 8], type: GgmlType.F32 },
  ];
  tensors.push({ name: 'output_norm.weight', shape: [embd], type: GgmlType.F32 });
  for (let il = 0; il < layers; il++) {
    for (const [n, shape] of [
      ['attn_norm', [embd]],
      ['attn_q', [embd, embd]],
      ['attn_k', [embd, embd]],
      ['attn_v', [embd, embd]],
      ['attn_output', [embd, embd]],
      ['ffn_norm', [embd]],
      ['ffn_gate', [embd, ffn]],
      ['ffn_up', [embd, ffn]],
      ['ffn_down', [ffn, embd]],
    ] as const) {
      tensors.push({ name: `blk.${il}.${n}.weight`, shape: [...shape], type: GgmlType.F32 });
    }
  }
  for (const t of tensors) {
    if (lie('dims')) {
      const d = pick(['zero', 'overflow', 'ndims', 'huge'] as const);
      if (d === 'zero') t.shape[int(t.shape.length)] = 0;
      else if (d === 'overflow') t.shape = [2 ** 27, 2 ** 27, 2 ** 2];
      else if (d === 'ndims') t.shape = Array.from({ length: pick([0, 5, 8]) }, () => 1);
      else t.shape = [pick(HUGE_U64)];
    }
    if (lie('types')) t.type = pick([4, 5, 31, 36, 40, 1000, 0xffffffff, GgmlType.Q4_0]);
  }

  type Kv = (r: RawGguf) => void;
  const kvs: Kv[] = [];
  const str =
    (s: string): Kv =>
    (w) => {
      const b = new TextEncoder().encode(s);
      const len = lie('counts')
        ? pick([BigInt(b.length + 1), BigInt(Math.max(0, b.length - 1)), ...HUGE_U64])
        : BigInt(b.length);
      w.u64(len).raw(b);
    };
  const key =
    (k: string, type: number, value: Kv): Kv =>
    (w) => {
      str(k)(w);
      w.u32(lie('types') ? pick([13, 100, 0xffffffff]) : type);
      value(w);
    };
  const u32 =
    (v: number): Kv =>
    (w) =>
      void w.u32(v);
  const arr =
    (elemType: number, n: number, elem: (i: number) => Kv): Kv =>
    (w) => {
      w.u32(elemType);
      const claimed = lie('counts') ? pick([BigInt(n + 1), BigInt(Math.max(0, n - 1)), 0n, ...HUGE_U64]) : BigInt(n);
      w.u64(claimed);
      for (let i = 0; i < n; i++) elem(i)(w);
    };
  /** An ARRAY of ARRAY … nested `depth` deep (depth 0 = an array of u32). */
  const nested =
    (depth: number): Kv =>
    (w) => {
      if (depth === 0) return arr(GgufValueType.UINT32, int(4), (i) => u32(i))(w);
      const n = 1 + int(2);
      w.u32(GgufValueType.ARRAY).u64(lie('counts') ? pick(HUGE_U64) : BigInt(n));
      for (let i = 0; i < n; i++) {
        // A mixed inner type now and then (nested arrays must share one element type).
        if (category === 'nesting' && rnd() < 0.1) arr(GgufValueType.STRING, 1, () => str('x'))(w);
        else nested(depth - 1)(w);
      }
    };

  kvs.push(
    key(
      'general.architecture',
      GgufValueType.STRING,
      str(lie('hparams') ? pick(['', 'mamba9', 'llama\u0000']) : 'llama'),
    ),
  );
  const hp = (suffix: string, v: number): Kv => {
    if (!lie('hparams')) return key(`llama.${suffix}`, GgufValueType.UINT32, u32(v));
    const how = pick(['u64', 'i32', 'f32', 'string', 'array'] as const);
    if (how === 'u64') return key(`llama.${suffix}`, GgufValueType.UINT64, (w) => void w.u64(pick([0n, ...HUGE_U64])));
    if (how === 'i32') return key(`llama.${suffix}`, GgufValueType.INT32, u32(pick([0xffffffff, 0x80000000])));
    if (how === 'f32')
      return key(`llama.${suffix}`, GgufValueType.FLOAT32, (w) => void w.f32(pick([NaN, Infinity, 2.5, -1, 1e30])));
    if (how === 'string') return key(`llama.${suffix}`, GgufValueType.STRING, str('12'));
    return key(
      `llama.${suffix}`,
      GgufValueType.ARRAY,
      arr(GgufValueType.UINT32, int(6), () => u32(pick([0, 1, 2 ** 31]))),
    );
  };
  kvs.push(
    hp('block_count', layers),
    hp('embedding_length', embd),
    hp('attention.head_count', 2),
    hp('feed_forward_length', ffn),
  );
  kvs.push(hp('context_length', 128), hp('attention.head_count_kv', 2));
  if (rnd() < 0.5 || category === 'hparams') {
    kvs.push(
      key(
        'llama.attention.layer_norm_rms_epsilon',
        GgufValueType.FLOAT32,
        (w) => void w.f32(lie('hparams') ? pick([NaN, -1, Infinity]) : 1e-5),
      ),
    );
    kvs.push(
      key(
        'llama.rope.freq_base',
        GgufValueType.FLOAT32,
        (w) => void w.f32(lie('hparams') ? pick([0, NaN, -5]) : 10000),
      ),
    );
  }
  kvs.push(
    key(
      'tokenizer.ggml.tokens',
      GgufValueType.ARRAY,
      arr(GgufValueType.STRING, 8, (i) => str(`t${i}`)),
    ),
  );
  kvs.push(
    key(
      'tokenizer.ggml.scores',
      GgufValueType.ARRAY,
      arr(GgufValueType.FLOAT32, 8, () => (w) => void w.f32(0)),
    ),
  );
  if (category === 'nesting' || rnd() < 0.2)
    kvs.push(key('nested', GgufValueType.ARRAY, nested(category === 'nesting' ? int(12) : 1)));
  let alignment = 32;
  if (category === 'alignment' || rnd() < 0.2) {
    const how = lie('alignment')
      ? pick(['zero', 'npot', 'huge', 'u64', 'f32', 'string', 'array', 'i32neg'] as const)
      : 'ok';
    if (how === 'ok') {
      alignment = pick([1, 8, 64, 4096]);
      kvs.push(key('general.alignment', GgufValueType.UINT32, u32(alignment)));
    } else if (how === 'zero' || how === 'npot' || how === 'huge') {
      kvs.push(
        key(
          'general.alignment',
          GgufValueType.UINT32,
          u32(how === 'zero' ? 0 : how === 'npot' ? pick([3, 24, 1000]) : pick([2 ** 21, 2 ** 31])),
        ),
      );
    } else if (how === 'u64')
      kvs.push(key('general.alignment', GgufValueType.UINT64, (w) => void w.u64(pick(HUGE_U64))));
    else if (how === 'f32') kvs.push(key('general.alignment', GgufValueType.FLOAT32, (w) => void w.f32(32)));
    else if (how === 'string') kvs.push(key('general.alignment', GgufValueType.STRING, str('32')));
    else if (how === 'array')
      kvs.push(
        key(
          'general.alignment',
          GgufValueType.ARRAY,
          arr(GgufValueType.UINT32, 1, () => u32(32)),
        ),
      );
    else kvs.push(key('general.alignment', GgufValueType.INT32, u32(0xffffffe0)));
  }

  const nTensors = lie('counts')
    ? pick([BigInt(tensors.length + 1), BigInt(tensors.length - 1), ...HUGE_U64])
    : BigInt(tensors.length);
  const nKv = lie('counts') ? pick([BigInt(kvs.length + 1), BigInt(kvs.length - 1), ...HUGE_U64]) : BigInt(kvs.length);
  r.header(3, nTensors, nKv);
  for (const kv of kvs) kv(r);
  let offset = 0;
  let dataBytes = 0;
  for (const t of tensors) {
    const elems = t.shape.reduce<number>((a, d) => a * Number(d), 1);
    const bytes = Number.isSafeInteger(elems) && elems < 1 << 20 ? elems * 4 : 0;
    let at: number | bigint = offset;
    if (lie('offsets')) at = pick([offset + 1, Math.max(0, offset - alignment), 2 ** 40, offset + 1_000_000]);
    str(t.name)(r);
    r.u32(t.shape.length);
    for (const d of t.shape) r.u64(d);
    r.u32(t.type).u64(at);
    offset += Math.ceil(bytes / Math.max(1, alignment)) * Math.max(1, alignment);
    dataBytes = offset;
  }
  if (alignment >= 1 && alignment <= 4096 && (alignment & (alignment - 1)) === 0) r.align(alignment);
  r.zeros(category === 'offsets' && rnd() < 0.3 ? int(dataBytes) : dataBytes);
  return { bytes: r.build(), category };
}

async function runCase(bytes: Uint8Array, initialChunkBytes: number): Promise<string> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`case hung for ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
  });
  try {
    const file = await Promise.race([parseGguf(new MemoryByteSource(bytes), { limits: { initialChunkBytes } }), hang]);
    try {
      readModelConfig(file);
      return 'config';
    } catch (e) {
      if (e instanceof LlmError) return `parsed, config ${e.code}`;
      throw e;
    }
  } catch (e) {
    if (e instanceof LlmError && e.code === 'gguf-invalid' && e.message.length > 0) return 'gguf-invalid';
    throw e;
  } finally {
    clearTimeout(timer);
  }
}

describe('GGUF structural fuzz corpus', () => {
  it(`survives ${CASES} structurally hostile headers (seed ${SEED})`, async () => {
    const rnd = mulberry32(SEED ^ 0x57c7);
    const outcomes: Record<string, number> = {};
    const byCategory: Record<string, number> = {};
    const started = performance.now();
    for (let i = 0; i < CASES; i++) {
      const { bytes, category } = buildCase(rnd);
      const chunk = [16, 64, 256, 4096, 1 << 20][Math.floor(rnd() * 5)];
      let outcome: string;
      try {
        outcome = await runCase(bytes, chunk);
      } catch (e) {
        throw new Error(
          `structural fuzz case #${i} (${category}, ${bytes.length} bytes, chunk ${chunk}) threw a non-LlmError: ${String(e)}`,
          { cause: e },
        );
      }
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
      byCategory[category] = (byCategory[category] ?? 0) + 1;
    }
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `gguf structural fuzz: ${CASES} cases in ${seconds.toFixed(1)} s (seed ${SEED}): ${JSON.stringify(outcomes)} by category ${JSON.stringify(byCategory)}`,
    );
    expect(Object.values(outcomes).reduce((a, b) => a + b, 0)).toBe(CASES);
    // The corpus exercises both ends: rejected headers and ones that parse and read as a model.
    expect(outcomes['gguf-invalid'] ?? 0).toBeGreaterThan(CASES / 10);
    expect(outcomes['config'] ?? 0).toBeGreaterThan(CASES / 20);
  }, 600_000);
});
