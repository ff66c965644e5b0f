/**
 * `webgguf conform`: checks a model on this machine against llama.cpp's numbers for it (a `*.reference.json`, format
 * in shared/models/README.md): max |Δ| of every position's logits, argmax agreement where llama.cpp is decisive, and
 * the greedy continuation. Prints one line per check and `N passed, M failed` last; exits 1 on any failure.
 */

import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { LlmError } from '../../errors.js';
import {
  checkConformance,
  classifyWeights,
  parseReferenceJson,
  referenceTolerances,
  type ConformanceReport,
  type GreedyMode,
  type Tolerances,
} from '../../model/conformance.js';
import { readModelConfig } from '../../model/load.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import type { BackendName } from '../../backend/select-backend.js';
import { choiceFlag, numberFlag, parseCommandLine, positiveIntFlag, usageError } from '../cli-args.js';
import { CLI_BACKENDS, kernelsFlag, loadModel, openModelFile, referencePathFor } from '../model-file.js';

/** `--greedy` modes; the first is the default. */
const GREEDY_MODES: readonly GreedyMode[] = ['near-tie', 'exact', 'report', 'off'];

const USAGE =
  'webgguf conform <model.gguf> [--reference <ref.json>, default: <model>.reference.json beside it] [--backend cpu|wasm|webgpu] [--kernels auto|hardware|software|hardware-nosubgroups (webgpu)] [--f32 (webgpu: no shader-f16)] [--threads N] [--json] [--greedy near-tie|exact|report|off] [--max-error X] [--max-dequant-error X]';

/**
 * Limits per backend: the reference table for 'cpu'; other backends may round activations (F16, Q8) as llama.cpp's
 * CPU does, so against the dequantized-F32 rows they get at least 2e-2 and at most llama.cpp's own F32-KV spread.
 * A WebGPU device on its f16 path (f16 KV cache and gemm tiles) adds 2e-2 to both limits: the rounding of llama.cpp's
 * own default F16 KV cache (the same limits as test/kernels/webgpu-model.gpu.test.ts).
 */
function tolerancesFor(backend: BackendName, base: Tolerances, f16Path: boolean): Tolerances {
  if (backend === 'cpu') return base;
  const extra = f16Path ? 2e-2 : 0;
  return { ...base, dequantF32: Math.max(base.dequantF32, 2e-2, base.kvF32) + extra, kvF32: base.kvF32 + extra };
}

/** A `--max-…-error` limit: a non-negative number, or undefined when not given. */
function errorLimit(flag: string, value: string | undefined): number | undefined {
  return numberFlag('conform', flag, value, (x) => x >= 0, 'a non-negative number');
}

function printReport(io: CliIo, report: ConformanceReport): void {
  io.out(`positions: ${report.positions}\n`);
  if (report.maxAbsDequantF32 !== null)
    io.out(`max abs error vs dequantized-F32 reference: ${report.maxAbsDequantF32.toExponential(3)}\n`);
  io.out(
    `max abs error vs F32-KV reference: ${report.maxAbsKvF32.toExponential(3)} (NMSE ${report.nmseKvF32.toExponential(2)})\n`,
  );
  io.out(
    `argmax agreement: ${report.argmaxAgree}/${report.positions} positions (${report.argmaxDecisiveAgree}/${report.argmaxDecisive} decisive)\n`,
  );
  if (report.greedyTokens) io.out(`greedy match: ${report.greedyPrefix}/${report.greedyTokens.length} tokens\n`);
  for (const c of report.checks) io.out(`${c.passed ? 'PASS' : 'FAIL'}  ${c.name}: ${c.detail}\n`);
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine(
    args,
    {
      reference: { type: 'string', short: 'r' },
      backend: { type: 'string', short: 'b' },
      threads: { type: 'string' },
      kernels: { type: 'string' },
      f32: { type: 'boolean' },
      json: { type: 'boolean' },
      greedy: { type: 'string' },
      'max-error': { type: 'string' },
      'max-dequant-error': { type: 'string' },
    },
    USAGE,
  );
  if (positionals.length !== 1) throw usageError('conform: expected one model path', USAGE);
  const referencePath = values.reference ?? referencePathFor(positionals[0]);
  if (referencePath === null) {
    throw usageError(
      `conform: no --reference given and no ${basename(positionals[0], '.gguf')}.reference.json beside the model`,
      USAGE,
    );
  }
  const backend = choiceFlag('conform', '--backend', values.backend, CLI_BACKENDS);
  const greedy = choiceFlag('conform', '--greedy', values.greedy, GREEDY_MODES);
  let refText: string;
  try {
    refText = await readFile(referencePath, 'utf8');
  } catch (e) {
    throw new LlmError(
      'invalid-request',
      `conform: cannot read reference ${referencePath} (${(e as { code?: string }).code ?? e})`,
      { cause: e },
    );
  }
  const ref = parseReferenceJson(refText, referencePath);

  const file = await openModelFile(positionals[0], io.signal);
  try {
    const config = readModelConfig(file.gguf);
    const weights = classifyWeights(file.gguf);
    const maxError = errorLimit('--max-error', values['max-error']);
    const maxDequantError = errorLimit('--max-dequant-error', values['max-dequant-error']);
    const positions = ref.eval_input.length + (greedy === 'off' ? 0 : (ref.greedy_kv_f32?.tokens.length ?? 0));
    const model = await loadModel(
      file,
      backend,
      Math.min(positions, config.trainContextLength),
      io.signal,
      positiveIntFlag('conform', '--threads', values.threads),
      values.f32 ? false : undefined,
      kernelsFlag('conform', values.kernels, backend),
    );
    const f16Path = backend === 'webgpu' && /^webgpu f16\b/.test(model.ops.description);
    const base = tolerancesFor(backend, referenceTolerances(weights, config.arch), f16Path);
    const tolerances: Tolerances = {
      ...base,
      kvF32: maxError ?? base.kvF32,
      dequantF32: maxDequantError ?? base.dequantF32,
    };
    try {
      const started = performance.now();
      const report = await checkConformance(model, ref, { tolerances, greedy, signal: io.signal });
      const elapsedMs = performance.now() - started;
      const failed = report.checks.filter((c) => !c.passed).length;
      if (values.json) {
        io.out(
          JSON.stringify({
            model: file.path,
            reference: referencePath,
            backend: model.ops.description,
            arch: config.arch,
            weights,
            tolerances,
            elapsedMs,
            ...report,
          }) + '\n',
        );
      } else {
        io.out(`model: ${file.path} (${config.arch}, ${weights} weights)\nbackend: ${model.ops.description}\n`);
        printReport(io, report);
      }
      io.out(`${report.checks.length - failed} passed, ${failed} failed\n`);
      return failed === 0 ? 0 : 1;
    } finally {
      model.destroy();
    }
  } finally {
    await file.source.close?.();
  }
}

const command: CliCommand = { name: 'conform', usage: USAGE, run };
export default command;
