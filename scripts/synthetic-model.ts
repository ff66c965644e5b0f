/**
 * Random-weight GGUF models for any supported architecture and quant type, written with the project's GGUF writer
 * (header) and quantizers (data), streamed tensor by tensor to disk so no buffer ever holds the model.
 * `writeSyntheticModel` makes one file; `makeSyntheticModel` makes and caches the benchmark models in ~/.cache/webgguf.
 * Metadata (tokenizer, rope, norms, soft-caps, windows) starts from the arch fixture in ../shared/models/arch.
 */

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, statSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LlmError, throwIfAborted } from '../src/errors.js';
import { parseGguf } from '../src/gguf/parse.js';
import { GgmlType, GgufValueType, type GgufFile, type GgufValue, type GgufValueTypeInfo } from '../src/gguf/types.js';
import { writeGgufChunks, type GgufWriteTensor } from '../src/gguf/write.js';
import { MemoryByteSource } from '../src/io/byte-source.js';
import { getQuantType, tensorByteLength } from '../src/quant/index.js';
import { mulberry32 as uniform } from './deterministic-random.mjs';
import { standardMetadata, type SyntheticArchSpec } from './synthetic/arch-spec.js';
import {
  FILE_TYPE,
  llama3RopeFreqs,
  NAMED_SHAPES,
  planTensors,
  SYNTHETIC_ARCHES,
  TEMPLATE_FILE,
  tensorType,
  type ModelShape,
  type SyntheticArch,
  type TensorPlan,
} from './synthetic/arch-plan.js';
import { ARCH_SPECS } from './synthetic/archs/index.js';
import { SPEC_BENCH_SHAPES, type SpecBenchShape } from './synthetic/bench-shapes.js';
import { padVocabulary } from './synthetic/pad-vocabulary.js';
import { fillGaussian, hashSeed, tensorBytes } from './synthetic/tensor-bytes.js';
import { hasRandomCodes } from './synthetic/random-codes.js';
import { loadIqGrids } from '../src/quant/iq-grids.js';
import { applyQuantMix, type QuantMix, quantMixOf } from './synthetic/quant-mix.js';

/** Repository root and the shared fixtures folder beside it. */
export const REPO_ROOT = findRepoRoot(path.dirname(fileURLToPath(import.meta.url)));
export const SHARED_MODELS = path.resolve(REPO_ROOT, '..', 'shared', 'models');

/** Options of `writeSyntheticModel`. */
export interface SyntheticModelOptions {
  /** One of SYNTHETIC_ARCHES or of the specs in synthetic/archs. */
  readonly arch: string;
  /** Quant of the matrices (1-D tensors stay F32). */
  readonly quant: GgmlType;
  /** Shape overrides over the arch fixture's dims; or a NAMED_SHAPES key. */
  readonly shape?: Partial<ModelShape> | string;
  /** Output file path. */
  readonly out: string;
  /** Seed of the weights (default 1). */
  readonly seed?: number;
  /** llama.cpp's per-tensor mix over `quant` (synthetic/quant-mix.ts), e.g. 'q4_k_m'. */
  readonly mix?: QuantMix;
  /** Type of token_embd/output; default: as llama.cpp picks for a mostly-`quant` file (see `defaultEmbedType`). */
  readonly embedType?: GgmlType;
  /** Gives the model an embedding head: `<arch>.pooling_type` (llama.cpp enum: 1 mean, 2 cls, 3 last, 4 rank). */
  readonly pooling?: number;
  /** false writes `<arch>.attention.causal = false` (every token sees the whole sequence). */
  readonly causal?: boolean;
  /** Tensors above this many elements are tiled from a pool of quantized random blocks (default 2^22). */
  readonly poolThreshold?: number;
  readonly signal?: AbortSignal;
}

/** What was written. */
export interface SyntheticModelInfo {
  readonly path: string;
  readonly arch: string;
  readonly shape: ModelShape;
  readonly nParams: number;
  readonly bytes: number;
  readonly tensorTypes: Readonly<Record<string, number>>;
}

/** Type llama.cpp gives a tied embedding in a mostly-`quant` file: Q8_0 under 0-quants, Q6_K under K/IQ quants. */
export function defaultEmbedType(quant: GgmlType): GgmlType | undefined {
  if (quant === GgmlType.Q4_0 || quant === GgmlType.Q4_1 || quant === GgmlType.Q5_0 || quant === GgmlType.Q5_1)
    return GgmlType.Q8_0;
  if ([GgmlType.Q2_K, GgmlType.Q3_K, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.IQ4_NL, GgmlType.IQ4_XS].includes(quant))
    return GgmlType.Q6_K;
  return undefined;
}

/** Parses a quant name (`q4_0`, `Q4_K`, `f16`) into a GgmlType webgguf can quantize. */
export function parseQuant(name: string): GgmlType {
  const id = (GgmlType as unknown as Record<string, number>)[name.toUpperCase()];
  if (id === undefined)
    throw new LlmError('invalid-request', `unknown quant type "${name}"; use e.g. q4_0, q8_0, q4_k, f16`);
  const t = getQuantType(id);
  // The read-only IQ types are made of random codes (synthetic/random-codes.ts).
  if (t.quantizeRow === undefined && !hasRandomCodes(id))
    throw new LlmError('unsupported-type', `quant type ${t.name} has no quantizer`);
  return id;
}

async function loadTemplate(arch: SyntheticArch): Promise<GgufFile> {
  const file = path.join(SHARED_MODELS, 'arch', TEMPLATE_FILE[arch]);
  if (!existsSync(file)) {
    throw new LlmError(
      'invalid-request',
      `fixture template ${file} for arch ${arch} is missing; the tool needs ../shared/models/arch`,
    );
  }
  return parseGguf(new MemoryByteSource(new Uint8Array(readFileSync(file)), file));
}

function num(v: GgufValue | undefined): number | undefined {
  return typeof v === 'bigint' ? Number(v) : typeof v === 'number' ? v : undefined;
}

/** The template's own shape. */
function templateShape(arch: SyntheticArch, t: GgufFile): ModelShape {
  const m = t.metadata;
  const k = (s: string): number | undefined => num(m[`${arch}.${s}`]);
  const nEmbd = k('embedding_length')!;
  const nHead = k('attention.head_count')!;
  const tokens = m['tokenizer.ggml.tokens'];
  return {
    nEmbd,
    nHead,
    nHeadKv: k('attention.head_count_kv') ?? nHead,
    headDim: k('attention.key_length') ?? nEmbd / nHead,
    nFf: k('feed_forward_length')!,
    nLayer: k('block_count')!,
    nVocab: Array.isArray(tokens) ? tokens.length : 0,
    tied: !t.tensors.some((x) => x.name === 'output.weight'),
  };
}

const U32: GgufValueTypeInfo = { type: GgufValueType.UINT32 };
/** llama.cpp's pooling_type of rerankers. */
const RANK_POOLING = 4;

/** Template metadata with the shape keys, name, file type and padded vocabulary replaced. */
function buildMetadata(
  arch: SyntheticArch,
  t: GgufFile,
  s: ModelShape,
  quant: GgmlType,
  name: string,
): {
  metadata: Record<string, GgufValue>;
  metadataTypes: Record<string, GgufValueTypeInfo>;
} {
  const metadata: Record<string, GgufValue> = Object.create(null) as Record<string, GgufValue>;
  const metadataTypes: Record<string, GgufValueTypeInfo> = Object.create(null) as Record<string, GgufValueTypeInfo>;
  for (const key of Object.keys(t.metadata)) {
    metadata[key] = t.metadata[key]!;
    metadataTypes[key] = t.metadataTypes[key]!;
  }
  const set = (key: string, value: number): void => {
    metadata[key] = typeof metadata[key] === 'bigint' ? BigInt(value) : value;
    metadataTypes[key] ??= U32;
  };
  set(`${arch}.embedding_length`, s.nEmbd);
  set(`${arch}.feed_forward_length`, s.nFf);
  set(`${arch}.block_count`, s.nLayer);
  set(`${arch}.attention.head_count`, s.nHead);
  set(`${arch}.attention.head_count_kv`, s.nHeadKv);
  set(`${arch}.rope.dimension_count`, s.headDim);
  if (`${arch}.attention.key_length` in metadata || s.headDim !== s.nEmbd / s.nHead) {
    set(`${arch}.attention.key_length`, s.headDim);
    set(`${arch}.attention.value_length`, s.headDim);
  }
  metadata['general.name'] = name;
  const ft = FILE_TYPE[quant];
  if (ft !== undefined) set('general.file_type', ft);
  const tokens = metadata['tokenizer.ggml.tokens'] as string[];
  if (s.nVocab > tokens.length) {
    padVocabulary(metadata, s.nVocab);
  } else if (s.nVocab < tokens.length) {
    throw new LlmError(
      'invalid-request',
      `n_vocab ${s.nVocab} is below the ${arch} template vocabulary (${tokens.length} tokens)`,
    );
  }
  return { metadata, metadataTypes };
}

/** f32 values of a tensor (small tensors and non-pooled paths). */
function tensorValues(
  p: TensorPlan,
  rnd: () => number,
  s: ModelShape,
  arch: SyntheticArch,
  t: GgufFile,
  shapeName: string,
): Float32Array {
  const n = p.shape.reduce((a, b) => a * b, 1);
  const out = new Float32Array(n); // (n) f32
  if (p.kind === 'rope_freqs') {
    const base = num(t.metadata[`${arch}.rope.freq_base`]) ?? 500000;
    // Llama 3.2 scaling for the benchmark shape; the fixture's short original context (64) otherwise.
    return shapeName === 'llama-3.2-1b'
      ? llama3RopeFreqs(s.headDim, base, 32, 1, 4, 8192)
      : llama3RopeFreqs(s.headDim, base, 8, 1, 4, 64);
  }
  fillGaussian(out, rnd, p.kind === 'norm' ? p.center : 0, p.std);
  return out;
}

/** Rejects shapes llama.cpp cannot load (non-positive sizes, heads not grouping evenly, odd head_dim). */
function checkShape(s: ModelShape): void {
  const dims: [string, number][] = [
    ['n_embd', s.nEmbd],
    ['n_head', s.nHead],
    ['n_head_kv', s.nHeadKv],
    ['head_dim', s.headDim],
    ['n_ff', s.nFf],
    ['n_layer', s.nLayer],
    ['n_vocab', s.nVocab],
  ];
  for (const [k, v] of dims) {
    if (!Number.isSafeInteger(v) || v <= 0)
      throw new LlmError('invalid-request', `synthetic model shape: ${k} = ${v} must be a positive integer`);
  }
  if (s.nHead % s.nHeadKv !== 0)
    throw new LlmError(
      'invalid-request',
      `synthetic model shape: n_head ${s.nHead} is not a multiple of n_head_kv ${s.nHeadKv}`,
    );
  if (s.headDim % 2 !== 0)
    throw new LlmError('invalid-request', `synthetic model shape: head_dim ${s.headDim} must be even (rope pairs)`);
}

function resolveShape(
  arch: SyntheticArch,
  t: GgufFile,
  shape: Partial<ModelShape> | string | undefined,
): { s: ModelShape; name: string } {
  const base = templateShape(arch, t);
  if (typeof shape === 'string') {
    const named = NAMED_SHAPES[shape];
    if (named === undefined)
      throw new LlmError(
        'invalid-request',
        `unknown shape "${shape}"; named shapes: ${Object.keys(NAMED_SHAPES).join(', ')}`,
      );
    return { s: { ...base, ...named.shape }, name: shape };
  }
  return { s: { ...base, ...(shape ?? {}) }, name: shape === undefined ? 'tiny' : 'custom' };
}

/** A model about to be written: its shape, tensors, metadata and how a tensor's f32 values are drawn. */
interface PreparedModel {
  readonly s: ModelShape;
  readonly plans: readonly TensorPlan[];
  readonly metadata: Record<string, GgufValue>;
  readonly metadataTypes: Record<string, GgufValueTypeInfo>;
  values(p: TensorPlan, rnd: () => number): Float32Array;
}

/** One of the first six architectures: metadata and shape start from its shared fixture. */
async function prepareLegacy(arch: SyntheticArch, o: SyntheticModelOptions): Promise<PreparedModel> {
  const template = await loadTemplate(arch);
  const { s, name: shapeName } = resolveShape(arch, template, o.shape);
  checkShape(s);
  const withRope = template.tensors.some((x) => x.name === 'rope_freqs.weight');
  const quantName = getQuantType(o.quant).name.toLowerCase();
  const name = `webgguf-synth-${arch}-${shapeName}-${quantName}`;
  return {
    s,
    plans: planTensors(arch, s, withRope),
    ...buildMetadata(arch, template, s, o.quant, name),
    values: (p, rnd) => tensorValues(p, rnd, s, arch, template, shapeName),
  };
}

/** An architecture written from scratch (synthetic/archs): the tokenizer from a shared file, the rest from the spec. */
async function prepareSpec(spec: SyntheticArchSpec, o: SyntheticModelOptions): Promise<PreparedModel> {
  const named = typeof o.shape === 'string' ? spec.namedShapes?.[o.shape] : undefined;
  if (typeof o.shape === 'string' && named === undefined) {
    const names = Object.keys(spec.namedShapes ?? {});
    throw new LlmError(
      'invalid-request',
      `fixture tool: ${spec.name} has ${names.length ? `the named shapes ${names.join(', ')}` : 'no named shapes'}; or pass k=v pairs`,
    );
  }
  const over: Partial<ModelShape> = named ?? (typeof o.shape === 'string' ? {} : (o.shape ?? {}));
  const s: ModelShape = {
    ...spec.shape,
    ...over,
    extra: { ...(spec.shape.extra ?? {}), ...(over.extra ?? {}) },
  };
  checkShape(s);
  const tokenizerFile = path.join(SHARED_MODELS, spec.tokenizer ?? 'stories260K.gguf');
  if (!existsSync(tokenizerFile)) {
    throw new LlmError('invalid-request', `fixture tokenizer ${tokenizerFile} for arch ${spec.name} is missing`);
  }
  const t = await parseGguf(new MemoryByteSource(new Uint8Array(readFileSync(tokenizerFile)), tokenizerFile));
  const metadata: Record<string, GgufValue> = Object.create(null) as Record<string, GgufValue>;
  const metadataTypes: Record<string, GgufValueTypeInfo> = Object.create(null) as Record<string, GgufValueTypeInfo>;
  const put = (key: string, value: GgufValue, type: GgufValueTypeInfo): void => {
    metadata[key] = value;
    metadataTypes[key] = type;
  };
  const quantName = getQuantType(o.quant).name.toLowerCase();
  put('general.architecture', spec.name, { type: GgufValueType.STRING });
  put('general.name', `webgguf-synth-${spec.name}-${quantName}`, { type: GgufValueType.STRING });
  const ft = FILE_TYPE[o.quant];
  if (ft !== undefined) put('general.file_type', ft, U32);
  const entries = { ...standardMetadata(spec.name, s), ...spec.metadata(s) };
  for (const [key, e] of Object.entries(entries)) if (e !== null) put(key, e.value, e.type);
  for (const key of Object.keys(t.metadata)) {
    if (key.startsWith('tokenizer.')) put(key, t.metadata[key]!, t.metadataTypes[key]!);
  }
  padVocabulary(metadata, s.nVocab);
  const tokens = metadata['tokenizer.ggml.tokens'];
  if (!Array.isArray(tokens) || tokens.length !== s.nVocab) {
    throw new LlmError(
      'invalid-request',
      `fixture tool: n_vocab ${s.nVocab} must equal the ${tokenizerFile} vocabulary (${Array.isArray(tokens) ? tokens.length : 0})`,
    );
  }
  return {
    s,
    plans: spec.tensors(s),
    metadata,
    metadataTypes,
    values: (p, rnd) => {
      const out = new Float32Array(p.shape.reduce((a, b) => a * b, 1)); // (elements) f32
      fillGaussian(out, rnd, p.kind === 'norm' ? p.center : 0, p.std);
      return out;
    },
  };
}

/**
 * Writes a random-weight model. The header comes from the project's `writeGgufChunks`; tensor data is generated,
 * quantized and appended one tensor at a time in the writer's layout (packed in order, aligned).
 */
export async function writeSyntheticModel(o: SyntheticModelOptions): Promise<SyntheticModelInfo> {
  const spec = ARCH_SPECS.get(o.arch);
  const legacy = SYNTHETIC_ARCHES.find((a) => a === o.arch);
  if (spec === undefined && legacy === undefined) {
    const known = [...SYNTHETIC_ARCHES, ...ARCH_SPECS.keys()];
    throw new LlmError('unsupported-arch', `fixture tool: architecture "${o.arch}" is not one of ${known.join(', ')}`);
  }
  const prepared = spec ? await prepareSpec(spec, o) : await prepareLegacy(legacy!, o);
  const { s, metadata, metadataTypes } = prepared;
  const plans = [...prepared.plans];
  if (o.pooling !== undefined) {
    metadata[`${o.arch}.pooling_type`] = o.pooling;
    metadataTypes[`${o.arch}.pooling_type`] = U32;
  }
  if (o.causal === false) {
    metadata[`${o.arch}.attention.causal`] = false;
    metadataTypes[`${o.arch}.attention.causal`] = { type: GgufValueType.BOOL };
  }
  // `--shape cls_out=0`: a reranker without `cls.output` (jina-reranker-v1: the spec's `cls` head alone).
  if (o.pooling === RANK_POOLING && (s.extra?.['cls_out'] ?? 1) > 0) {
    // A Qwen3-Reranker-style head: two labels and cls.output [n_embd, 2] after the last token (llama.cpp qwen3).
    metadata[`${o.arch}.classifier.output_labels`] = ['yes', 'no'];
    metadataTypes[`${o.arch}.classifier.output_labels`] = {
      type: GgufValueType.ARRAY,
      element: { type: GgufValueType.STRING },
    };
    plans.push({
      name: 'cls.output.weight',
      shape: [s.nEmbd, 2],
      kind: 'matrix',
      std: 1 / Math.sqrt(s.nEmbd),
      center: 0,
    });
  }
  const embedType = o.embedType ?? (s.tied ? defaultEmbedType(o.quant) : undefined);
  const types = plans.map((p) => tensorType(p, o.quant, embedType));
  if (o.mix) applyQuantMix(o.mix, plans, types);
  if (types.some(hasRandomCodes)) await loadIqGrids(); // dequantization calibrates the random codes' scales
  const alignment = 32;

  // Header: the writer needs every tensor's byte length; zero-filled placeholders are never touched (lazy pages).
  const placeholders: GgufWriteTensor[] = plans.map((p, i) => ({
    name: p.name,
    type: types[i]!,
    shape: p.shape,
    data: new Uint8Array(tensorByteLength(types[i]!, p.shape)),
  }));
  const header = writeGgufChunks({ metadata, metadataTypes, tensors: placeholders }).next().value as Uint8Array;
  placeholders.length = 0;

  mkdirSync(path.dirname(o.out), { recursive: true });
  const fd = openSync(o.out, 'w');
  let pos = 0;
  let nParams = 0;
  const tensorTypes: Record<string, number> = {};
  try {
    writeSync(fd, header);
    pos = header.byteLength;
    for (let i = 0; i < plans.length; i++) {
      throwIfAborted(o.signal, 'synthetic model generation');
      const p = plans[i]!;
      const rnd = uniform(hashSeed(o.seed ?? 1, p.name));
      const data = tensorBytes(p, types[i]!, () => prepared.values(p, rnd), rnd, o.poolThreshold ?? 1 << 22);
      writeSync(fd, data);
      pos += data.byteLength;
      const pad = (alignment - (pos % alignment)) % alignment;
      if (pad > 0 && i + 1 < plans.length) {
        writeSync(fd, new Uint8Array(pad));
        pos += pad;
      }
      nParams += p.shape.reduce((a, b) => a * b, 1);
      const tn = getQuantType(types[i]!).name;
      tensorTypes[tn] = (tensorTypes[tn] ?? 0) + 1;
      await new Promise((r) => setImmediate(r)); // let aborts and other work in
    }
  } finally {
    closeSync(fd);
  }
  return { path: o.out, arch: o.arch, shape: s, nParams, bytes: statSync(o.out).size, tensorTypes };
}

/** Where cached benchmark models live: $WEBGGUF_CACHE or ~/.cache/webgguf/synthetic. */
export function syntheticCacheDir(): string {
  return process.env['WEBGGUF_CACHE'] ?? path.join(homedir(), '.cache', 'webgguf', 'synthetic');
}

/**
 * Path of a cached random-weight benchmark model, generating it first when missing (minutes for the 0.5–1 B shapes).
 * `quant`: a GgmlType or name ('q4_0'); `arch` defaults to the shape's (qwen2 for 'qwen2.5-0.5b', llama otherwise).
 */
export async function makeSyntheticModel(opts: {
  shape: 'qwen2.5-0.5b' | 'llama-3.2-1b' | 'tiny' | 'lfm2-1.2b' | 'qwen3.5-0.8b' | SpecBenchShape;
  quant: GgmlType | string;
  arch?: SyntheticArch;
  seed?: number;
  signal?: AbortSignal;
}): Promise<string> {
  const mixed = typeof opts.quant === 'string' ? quantMixOf(opts.quant) : null; // q4_k_m: Q4_K + llama.cpp's mix
  const quant = mixed?.base ?? (typeof opts.quant === 'string' ? parseQuant(opts.quant) : opts.quant);
  const quantName = mixed?.mix ?? getQuantType(quant).name.toLowerCase();
  const mix = mixed ? { mix: mixed.mix } : {};
  if (opts.shape in SPEC_BENCH_SHAPES) {
    const spec = SPEC_BENCH_SHAPES[opts.shape as SpecBenchShape];
    const file = path.join(syntheticCacheDir(), `${spec.arch}-${opts.shape}-${quantName}-s${opts.seed ?? 1}-v1.gguf`);
    if (existsSync(file)) return file;
    const tmp = `${file}.partial-${process.pid}`;
    await writeSyntheticModel({
      arch: spec.arch,
      quant,
      shape: spec.shape,
      out: tmp,
      seed: opts.seed ?? 1,
      ...mix,
      ...('embedType' in spec ? { embedType: spec.embedType } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    renameSync(tmp, file);
    return file;
  }
  // A spec's named shape (lfm2-1.2b), else one of NAMED_SHAPES.
  const specArch = [...ARCH_SPECS.values()].find((sp) => sp.namedShapes?.[opts.shape] !== undefined)?.name;
  const named = NAMED_SHAPES[opts.shape as keyof typeof NAMED_SHAPES];
  if (named === undefined && specArch === undefined)
    throw new LlmError('invalid-request', `unknown synthetic shape "${opts.shape}"`);
  const arch = specArch ?? opts.arch ?? named!.arch;
  const file = path.join(syntheticCacheDir(), `${arch}-${opts.shape}-${quantName}-s${opts.seed ?? 1}-v1.gguf`);
  if (existsSync(file)) return file;
  const tmp = `${file}.partial-${process.pid}`;
  await writeSyntheticModel({
    arch,
    quant,
    shape: opts.shape,
    out: tmp,
    seed: opts.seed ?? 1,
    ...mix,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  renameSync(tmp, file);
  return file;
}

/** The nearest folder at or above `dir` holding the project's package.json (works from source and from bundles). */
function findRepoRoot(dir: string): string {
  for (let d = dir; ; d = path.dirname(d)) {
    if (existsSync(path.join(d, 'package.json')) && existsSync(path.join(d, 'src', 'index.ts'))) return d;
    if (path.dirname(d) === d) return path.resolve(dir, '..');
  }
}
