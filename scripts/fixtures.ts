/**
 * The fixture tool: makes a random-weight GGUF for any supported architecture and quant type (project GGUF writer and
 * quantizers), then its reference JSON from real llama.cpp through the dev-only oracle package in scripts/oracle.
 * Usage: node scripts/run-ts.mjs scripts/fixtures.ts --arch llama --quant q4_0 --out DIR [--shape tiny|qwen2.5-0.5b|
 *        k=v,…] [--seed N] [--prompt "…"] [--embed-type q8_0] [--no-reference] [--no-dequant]
 *        [--embedding mean|cls|last|rank]: gives the model `<arch>.pooling_type` (an embedding head); the reference then
 *        also holds llama.cpp's pooled embeddings of a few inputs (scripts/oracle/make-embedding-reference.mjs).
 *   shape keys: n_embd, n_head, n_head_kv, head_dim, n_ff, n_layer, n_vocab, tied (0/1); any other key (n_expert=8, …)
 *   is an architecture's own knob (ModelShape.extra, read by its spec in scripts/synthetic/archs).
 * Recording (tests regenerate the model from its recipe; only the recipe, sha256 and compact reference are committed):
 *        npm run fixtures -- --record [--label NAME] --arch smollm3 --quant q8_0 --seed 3 [--shape …]
 *   writes test/fixtures/models/<arch>-<quant>[-<label>]-s<seed>.json (needs the oracle in scripts/oracle).
 * Images (issue #17): … --mmproj <type> --image FILE [--prompt "… <__media__> …"] writes `<model>.mmproj.gguf` and an mtmd
 *   `<model>.reference.json` instead (scripts/image-fixture.ts; needs llama.cpp's CPU libmtmd, LLCPP_SRC).
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { SYNTHETIC_ARCHES, type ModelShape } from './synthetic/arch-plan.js';
import { ARCH_SPECS } from './synthetic/archs/index.js';
import { type FixtureRecipe, fileSha256, recordFixture } from './synthetic/recorded-fixture.js';
import { parseQuant, REPO_ROOT, writeSyntheticModel } from './synthetic-model.js';

const USAGE = `usage: node scripts/run-ts.mjs scripts/fixtures.ts --arch <${[...SYNTHETIC_ARCHES, ...ARCH_SPECS.keys()].join('|')}> --quant <q4_0|q8_0|q4_k|…|f16>
         --out DIR [--shape tiny|qwen2.5-0.5b|llama-3.2-1b|n_embd=256,n_layer=2,…] [--seed N] [--prompt "…"]
         [--embed-type TYPE] [--embedding mean|cls|last|rank] [--non-causal] [--no-reference] [--no-dequant] [--record [--label NAME]]`;

/** llama.cpp's pooling_type enum values by name. */
const POOLING_IDS: Readonly<Record<string, number>> = { none: 0, mean: 1, cls: 2, last: 3, rank: 4 };

const SHAPE_KEYS: Readonly<Record<string, keyof ModelShape>> = {
  n_embd: 'nEmbd',
  n_head: 'nHead',
  n_head_kv: 'nHeadKv',
  head_dim: 'headDim',
  n_ff: 'nFf',
  n_layer: 'nLayer',
  n_vocab: 'nVocab',
  tied: 'tied',
};

/** Parses `--shape` (a named shape or k=v pairs). */
export function parseShape(spec: string | undefined): Partial<ModelShape> | string | undefined {
  if (spec === undefined || !spec.includes('=')) return spec;
  const out: Record<string, number | boolean | Record<string, number>> = {};
  const extra: Record<string, number> = {};
  for (const kv of spec.split(',')) {
    const [k, v] = kv.split('=');
    const name = k!.trim();
    const key = SHAPE_KEYS[name];
    if (v === undefined || !Number.isFinite(Number(v)))
      throw new Error(
        `--shape: "${kv}" is not key=number (keys: ${Object.keys(SHAPE_KEYS).join(', ')}, or a spec's own)`,
      );
    if (key === undefined) extra[name] = Number(v);
    else out[key] = key === 'tied' ? v === '1' || v === 'true' : Number(v);
  }
  if (Object.keys(extra).length > 0) out['extra'] = extra;
  return out as Partial<ModelShape>;
}

/** Runs the oracle to write `<model>.reference.json`; returns false (with a message) when the oracle is not installed. */
export function writeReference(modelPath: string, prompt: string, dequant: boolean): boolean {
  const oracle = path.join(REPO_ROOT, 'scripts', 'oracle');
  if (!existsSync(path.join(oracle, 'node_modules', 'node-llama-cpp'))) {
    console.error(
      'fixtures: llama.cpp oracle not installed (cd scripts/oracle && npm install); skipping the reference JSON',
    );
    return false;
  }
  const args = [
    path.join(oracle, 'make-reference.mjs'),
    modelPath,
    '--prompt',
    prompt,
    ...(dequant ? [] : ['--no-dequant']),
  ];
  const r = spawnSync(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`fixtures: oracle failed (exit ${r.status}) for ${modelPath}`);
  return true;
}

/** Runs the oracle's embedding reference for `modelPath`; returns the parsed JSON (null when the oracle is missing). */
function writeEmbeddingReference(modelPath: string): Record<string, unknown> | null {
  const script = path.join(REPO_ROOT, 'scripts', 'oracle', 'make-embedding-reference.mjs');
  if (!existsSync(path.join(REPO_ROOT, 'scripts', 'oracle', 'node_modules', 'node-llama-cpp'))) return null;
  const r = spawnSync(process.execPath, [script, modelPath], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (r.status !== 0) throw new Error(`fixtures: embedding oracle failed (exit ${r.status}) for ${modelPath}`);
  return JSON.parse(readFileSync(modelPath.replace(/\.gguf$/, '.embeddings.json'), 'utf8')) as Record<string, unknown>;
}

/** CLI entry (called by scripts/run-ts.mjs). Returns the exit status. */
export async function main(args: string[]): Promise<number> {
  const opt = (name: string): string | undefined => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const arch = opt('--arch');
  const quantName = opt('--quant');
  const record = args.includes('--record');
  const outDir = record ? mkdtempSync(path.join(tmpdir(), 'webgguf-record-')) : opt('--out');
  if (args.includes('--help') || arch === undefined || quantName === undefined || outDir === undefined) {
    console.error(USAGE);
    return args.includes('--help') ? 0 : 2;
  }
  const quant = parseQuant(quantName);
  const shape = parseShape(opt('--shape'));
  const shapeLabel = typeof shape === 'string' ? shape : shape === undefined ? 'tiny' : 'custom';
  const seed = Number(opt('--seed') ?? 1);
  const embed = opt('--embed-type');
  const poolingName = opt('--embedding');
  const pooling = poolingName === undefined ? undefined : POOLING_IDS[poolingName];
  if (poolingName !== undefined && pooling === undefined) {
    console.error(`--embedding: "${poolingName}" is not one of ${Object.keys(POOLING_IDS).join(', ')}`);
    return 2;
  }
  const out = path.resolve(outDir, `${arch}-${shapeLabel}-${quantName.toLowerCase()}.gguf`);
  const t0 = performance.now();
  const info = await writeSyntheticModel({
    arch,
    quant,
    out,
    seed,
    ...(shape !== undefined ? { shape } : {}),
    ...(embed !== undefined ? { embedType: parseQuant(embed) } : {}),
    ...(pooling !== undefined ? { pooling } : {}),
    ...(args.includes('--non-causal') ? { causal: false } : {}),
  });
  const secs = ((performance.now() - t0) / 1000).toFixed(1);
  console.log(
    `${info.path}: ${info.arch} ${JSON.stringify(info.shape)}, ${(info.nParams / 1e6).toFixed(2)} M params, ` +
      `${info.bytes} bytes, tensor types ${JSON.stringify(info.tensorTypes)} (${secs} s)`,
  );
  const prompt = opt('--prompt') ?? 'Once upon a time, there was a robot.';
  const mmproj = opt('--mmproj');
  if (mmproj !== undefined) {
    const image = opt('--image');
    if (image === undefined || record) {
      console.error('fixtures: --mmproj needs --image FILE (and no --record)');
      return 2;
    }
    const { writeImageReference } = await import('./image-fixture.js');
    return writeImageReference(
      info.path,
      mmproj,
      image,
      seed,
      opt('--prompt') ?? 'Once upon a time, <__media__> there was',
    );
  }
  if (record) {
    try {
      // An encoder has no lm head (its llama.cpp logits are zeros): its reference is the embeddings alone.
      const embeddingOnly = ARCH_SPECS.get(arch)?.embeddingOnly === true;
      if (embeddingOnly && pooling === undefined) {
        console.error(`fixtures: ${arch} has no lm head; record it with --embedding mean|cls|…`);
        return 2;
      }
      if (!embeddingOnly && !writeReference(info.path, prompt, !args.includes('--no-dequant'))) return 1;
      const embeddings = pooling !== undefined ? writeEmbeddingReference(info.path) : undefined;
      if (embeddings === null) return 1;
      const label =
        opt('--label') ??
        (poolingName !== undefined
          ? `embd-${poolingName}${args.includes('--non-causal') ? '-noncausal' : ''}`
          : undefined);
      const id = `${arch}-${quantName.toLowerCase()}${label ? `-${label}` : ''}-s${seed}`;
      const recipe: FixtureRecipe = {
        arch,
        quant: quantName.toLowerCase(),
        seed,
        shape: info.shape,
        ...(embed !== undefined ? { embedType: embed.toLowerCase() } : {}),
        ...(pooling !== undefined ? { pooling } : {}),
        ...(args.includes('--non-causal') ? { causal: false } : {}),
      };
      const reference = embeddingOnly
        ? {}
        : (JSON.parse(readFileSync(info.path.replace(/\.gguf$/, '.reference.json'), 'utf8')) as Record<
            string,
            unknown
          >);
      const file = path.join(REPO_ROOT, 'test', 'fixtures', 'models', `${id}.json`);
      writeFileSync(file, recordFixture(recipe, fileSha256(info.path), reference, embeddings));
      console.log(`recorded ${file}`);
    } finally {
      rmSync(outDir, { recursive: true, force: true });
    }
    return 0;
  }
  if (!args.includes('--no-reference')) {
    writeReference(info.path, prompt, !args.includes('--no-dequant'));
    if (pooling !== undefined) writeEmbeddingReference(info.path);
  }
  return 0;
}
