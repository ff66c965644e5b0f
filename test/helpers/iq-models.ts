/**
 * Test models in the IQ1–IQ3 / MXFP4 types, made at test time by ggml from a committed seed, with llama.cpp's
 * reference logits: a tiny F32 llama from the fixture generator, re-typed by ggml itself — IQ3_S and MXFP4 by
 * llama.cpp's file quantizer (scripts/oracle/quantize-model.mjs: IQ3_S and MOSTLY_MXFP4_MOE need no importance
 * matrix), the others by ggml_quantize_chunk with a synthetic importance matrix (scripts/oracle/requantize-gguf.mjs,
 * token embedding Q8_0) — then referenced by make-reference.mjs. Needs the dev-only oracle (scripts/oracle).
 */

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, writeSyntheticModel } from '../../scripts/synthetic-model.js';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { GgmlType } from '../../src/gguf/types.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import {
  type ConformanceReport,
  checkConformance,
  classifyWeights,
  type GreedyMode,
  type ReferenceJson,
} from '../../src/model/conformance.js';
import { loadTransformer } from '../../src/model/load.js';
import { loadReferenceJson } from './reference-json.js';
import { type ToleranceOverride, tolerancesFor } from './tolerance.js';

const ORACLE = path.join(REPO_ROOT, 'scripts', 'oracle');

/** True when the llama.cpp oracle package is installed (scripts/oracle/node_modules). */
export const HAVE_ORACLE = existsSync(path.join(ORACLE, 'node_modules', 'node-llama-cpp'));

/** One model to make: its type, and llama.cpp's file type when its own quantizer makes it. */
export interface IqModel {
  readonly type: string;
  readonly ftype?: string;
  /**
   * How the greedy continuation is judged. 'report' for IQ1_S: llama.cpp's greedy run multiplies Q8_K-rounded
   * activations, which moves this 1.5-bit random model's flat logits by up to 0.34 (within the F32-KV limit) and
   * picks a token three deep in the exact-math ranking; the exact-math logits (dequantized-F32 check) pin decoding.
   */
  readonly greedy: GreedyMode;
}

/** Every type of the issue, the seed model's matrices re-typed to it. */
export const IQ_MODELS: readonly IqModel[] = [
  { type: 'MXFP4', ftype: 'MOSTLY_MXFP4_MOE', greedy: 'near-tie' },
  { type: 'IQ3_S', ftype: 'MOSTLY_IQ3_S', greedy: 'near-tie' },
  { type: 'IQ3_XXS', greedy: 'near-tie' },
  { type: 'IQ2_XXS', greedy: 'near-tie' },
  { type: 'IQ2_XS', greedy: 'near-tie' },
  { type: 'IQ2_S', greedy: 'near-tie' },
  { type: 'IQ1_S', greedy: 'report' },
  { type: 'IQ1_M', greedy: 'near-tie' },
];

function oracle(script: string, args: string[]): void {
  const r = spawnSync(process.execPath, [path.join(ORACLE, script), ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${script} ${args.join(' ')} failed (${r.status}): ${r.stderr.slice(-2000)}`);
}

/** Writes the seed F32 llama (tiny shape, seed 14) to `dir`; returns its path. */
export async function writeSeedModel(dir: string): Promise<string> {
  const f32 = path.join(dir, 'llama-f32.gguf');
  await writeSyntheticModel({ arch: 'llama', quant: GgmlType.F32, out: f32, seed: 14 });
  return f32;
}

/** Makes `m`'s model from the seed model and its reference; returns the model path and the reference. */
export function makeIqModel(dir: string, f32: string, m: IqModel): { gguf: string; ref: ReferenceJson } {
  const gguf = path.join(dir, `llama-${m.type.toLowerCase()}.gguf`);
  if (m.ftype) oracle('quantize-model.mjs', [f32, gguf, m.ftype, '--pure']);
  else oracle('requantize-gguf.mjs', [f32, gguf, m.type, '--embed', 'Q8_0']);
  const refPath = gguf.replace(/\.gguf$/, '.reference.json');
  oracle('make-reference.mjs', [gguf, '--out', refPath, '--greedy', '30']);
  return { gguf, ref: loadReferenceJson(refPath) };
}

/** Loads `gguf` on a backend and runs the conformance checks; also returns the file's tensor type names. */
export async function checkIqModel(
  gguf: string,
  ref: ReferenceJson,
  m: IqModel,
  createOps: () => Ops | Promise<Ops>,
  tolerances?: ToleranceOverride,
): Promise<{ report: ConformanceReport; types: Set<string> }> {
  const source = await NodeFileSource.open(gguf);
  const ops = await createOps();
  try {
    const file = await parseGguf(source);
    const types = new Set(file.tensors.map((t) => GgmlType[t.type]));
    const tol = tolerancesFor({ weights: classifyWeights(file), arch: 'llama', id: `iq-${m.type}` }, tolerances);
    const model = await loadTransformer(file, source, ops, {
      contextLength: ref.eval_input.length + (ref.greedy_kv_f32?.tokens.length ?? 0) + 1,
    });
    return { report: await checkConformance(model, ref, { tolerances: tol, greedy: m.greedy }), types };
  } finally {
    ops.destroy();
    await source.close?.();
  }
}
