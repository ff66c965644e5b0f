/**
 * Recorded fixtures: a random-weight model is never committed; what is committed is its recipe (arch, quant, seed,
 * shape), the sha256 of the file the generator makes from it, and llama.cpp's reference for it in compact form
 * (`test/fixtures/models/<id>.json`, logits as base64 little-endian float32). `materializeRecordedFixtures` regenerates
 * every model at test time and fails loudly when a generator change alters a file's bytes.
 */

import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import type { ModelShape } from './arch-plan.js';

/** How to regenerate a recorded model. */
export interface FixtureRecipe {
  readonly arch: string;
  /** Quant name as `--quant` takes it (q8_0, q4_k, f16, …). */
  readonly quant: string;
  readonly seed: number;
  /** The complete shape (defaults resolved), so a spec's new defaults never change a recorded model. */
  readonly shape: ModelShape;
  /** token_embd/output type name, when not the default. */
  readonly embedType?: string;
  /** `<arch>.pooling_type` given to the model (`--embedding`), when it has an embedding head. */
  readonly pooling?: number;
  /** false: `<arch>.attention.causal = false` (`--non-causal`). */
  readonly causal?: boolean;
}

/** A committed fixture record. */
export interface FixtureRecord {
  readonly recipe: FixtureRecipe;
  readonly gguf_sha256: string;
  /** The reference JSON with every `logits_per_position_*` replaced by `{ rows, cols, f32_base64 }`. */
  readonly reference: Readonly<Record<string, unknown>>;
  /**
   * llama.cpp's pooled embeddings (scripts/oracle/make-embedding-reference.mjs) with the vectors packed as
   * `{ rows, cols, f32_base64 }` under `embeddings`; regenerated as `<id>.embeddings.json` with `inputs[i].embedding`.
   */
  readonly embeddings?: Readonly<Record<string, unknown>>;
}

/** One input of an embedding reference. */
interface EmbeddingInput {
  readonly text: string;
  readonly tokens: readonly number[];
  readonly embedding: readonly number[];
}

/** Reference keys kept in a record (the F16-KV runs are dropped: conformance compares against F32 KV). */
const KEPT_KEYS = [
  'model',
  'producer',
  'prompt',
  'add_bos',
  'prompt_tokens_no_bos',
  'eval_input',
  'n_vocab',
  'note',
  'argmax_per_position',
  'logits_per_position_kv_f32',
  'logits_per_position_kv_f32_dequant_f32',
  'greedy_kv_f32',
];

interface PackedRows {
  readonly rows: number;
  readonly cols: number;
  readonly f32_base64: string;
}

function packRows(rows: readonly (readonly number[])[]): PackedRows {
  const cols = rows[0]?.length ?? 0;
  const data = new Float32Array(rows.length * cols); // [rows, cols]
  rows.forEach((r, i) => data.set(r, i * cols));
  return { rows: rows.length, cols, f32_base64: Buffer.from(data.buffer).toString('base64') };
}

function unpackRows(p: PackedRows, where: string): number[][] {
  const bytes = Buffer.from(p.f32_base64, 'base64');
  if (bytes.byteLength !== p.rows * p.cols * 4) throw new Error(`${where}: packed logits have the wrong length`);
  const data = new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  return Array.from({ length: p.rows }, (_, i) => Array.from(data.subarray(i * p.cols, (i + 1) * p.cols)));
}

/**
 * The record of a reference JSON made by scripts/oracle/make-reference.mjs, and of an embedding reference made by
 * scripts/oracle/make-embedding-reference.mjs when the model has an embedding head.
 */
export function recordFixture(
  recipe: FixtureRecipe,
  ggufSha256: string,
  reference: Record<string, unknown>,
  embeddings?: Record<string, unknown>,
): string {
  const kept: Record<string, unknown> = {};
  for (const key of KEPT_KEYS) {
    const v = reference[key];
    if (v === undefined) continue;
    kept[key] = key.startsWith('logits_per_position_') ? packRows(v as number[][]) : v;
  }
  const record: FixtureRecord = {
    recipe,
    gguf_sha256: ggufSha256,
    reference: kept,
    ...(embeddings ? { embeddings: packEmbeddings(embeddings) } : {}),
  };
  return `${JSON.stringify(record, null, 1)}\n`;
}

/** An embedding reference with its vectors packed (`vectors`) and each input's text and tokens kept. */
function packEmbeddings(e: Record<string, unknown>): Record<string, unknown> {
  const inputs = e['inputs'] as EmbeddingInput[];
  const { model_sha256: _sha, inputs: _inputs, ...rest } = e;
  return {
    ...rest,
    inputs: inputs.map(({ text, tokens }) => ({ text, tokens })),
    vectors: packRows(inputs.map((i) => i.embedding)),
  };
}

/** The embedding reference JSON text (the oracle's format) of a packed `embeddings` section. */
function expandEmbeddings(packed: Readonly<Record<string, unknown>>, where: string): string {
  const { vectors, inputs, ...rest } = packed as { vectors: PackedRows; inputs: Omit<EmbeddingInput, 'embedding'>[] };
  const rows = unpackRows(vectors, where);
  return JSON.stringify({ ...rest, inputs: inputs.map((input, i) => ({ ...input, embedding: rows[i] })) });
}

/** The reference JSON text (the ../shared format) of a record. */
function expandReference(record: FixtureRecord, where: string): string {
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(record.reference)) {
    out[key] = key.startsWith('logits_per_position_') ? unpackRows(v as PackedRows, where) : v;
  }
  return JSON.stringify(out);
}

/** SHA-256 (hex) of a file. */
export function fileSha256(file: string): string {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

/** The GgmlType of a quant name. */
function quantOf(name: string): GgmlType {
  const id = (GgmlType as unknown as Record<string, number>)[name.toUpperCase()];
  if (id === undefined) throw new Error(`unknown quant ${name}`);
  getQuantType(id);
  return id;
}

/** Writes a model for `recipe` (the generator is passed in so this module stays free of it). */
export type ModelWriter = (o: {
  arch: string;
  quant: GgmlType;
  seed: number;
  shape: ModelShape;
  out: string;
  embedType?: GgmlType;
  pooling?: number;
  causal?: boolean;
}) => Promise<unknown>;

/** Generates the model of `recipe` at `out`. */
export async function writeRecipe(recipe: FixtureRecipe, out: string, write: ModelWriter): Promise<void> {
  await write({
    arch: recipe.arch,
    quant: quantOf(recipe.quant),
    seed: recipe.seed,
    shape: recipe.shape,
    out,
    ...(recipe.embedType ? { embedType: quantOf(recipe.embedType) } : {}),
    ...(recipe.pooling !== undefined ? { pooling: recipe.pooling } : {}),
    ...(recipe.causal === false ? { causal: false } : {}),
  });
}

/**
 * Regenerates every record of `recordDir` into `outDir` as `<id>.gguf` + `<id>.reference.json` (skipping files whose
 * sha256 already matches) and removes the models of records that no longer exist; throws naming the record when a
 * regenerated file's sha256 differs from the recorded one.
 */
export async function materializeRecordedFixtures(
  recordDir: string,
  outDir: string,
  write: ModelWriter,
): Promise<string[]> {
  mkdirSync(outDir, { recursive: true });
  const made: string[] = [];
  const names = existsSync(recordDir) ? readdirSync(recordDir).filter((f) => f.endsWith('.json')) : [];
  for (const name of names.sort()) {
    const where = path.join(recordDir, name);
    const record = JSON.parse(readFileSync(where, 'utf8')) as FixtureRecord;
    const id = name.replace(/\.json$/, '');
    const gguf = path.join(outDir, `${id}.gguf`);
    if (!existsSync(gguf) || fileSha256(gguf) !== record.gguf_sha256) {
      const tmp = `${gguf}.partial-${process.pid}`;
      await writeRecipe(record.recipe, tmp, write);
      const sha = fileSha256(tmp);
      if (sha !== record.gguf_sha256) {
        throw new Error(
          `recorded fixture ${where}: the generator now makes a different file (sha256 ${sha}, recorded ` +
            `${record.gguf_sha256}); if the change is intended, re-record it: npm run fixtures -- --record ` +
            `--arch ${record.recipe.arch} --quant ${record.recipe.quant} --seed ${record.recipe.seed} …`,
        );
      }
      renameSync(tmp, gguf);
    }
    // An encoder's record holds embeddings only (no logits reference to compare).
    if (Object.keys(record.reference).length > 0)
      writeFileSync(path.join(outDir, `${id}.reference.json`), expandReference(record, where));
    if (record.embeddings) {
      writeFileSync(path.join(outDir, `${id}.embeddings.json`), expandEmbeddings(record.embeddings, where));
    }
    made.push(gguf);
  }
  // A deleted or renamed record leaves no model behind (the suites list every model of outDir).
  const ids = new Set(names.map((n) => n.replace(/\.json$/, '')));
  for (const f of readdirSync(outDir)) {
    const id = f.replace(/\.(gguf|reference\.json|embeddings\.json)$/, '');
    if (id !== f && !ids.has(id)) rmSync(path.join(outDir, f), { force: true });
  }
  return made;
}
