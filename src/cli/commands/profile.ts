/**
 * `webgguf profile`: the structural profile of a model on the WebGPU backend — per decode token and for one prefill
 * chunk: dispatches, submissions, bytes read back, weight bytes the GGUF holds vs bytes the kernels load, KV bytes
 * vs KV bytes attention reads, and per matrix product its workgroups and subgroups. Counts, not timings, so it
 * means the same on lavapipe as on a GPU; `--kernels hardware` profiles the GPU kernel set on a software adapter.
 */

import type { StepProfile } from '../../backend/webgpu/profile.js';
import { PROFILE_SUBGROUP_WIDTH } from '../../backend/webgpu/profile.js';
import { LlmError } from '../../errors.js';
import { loadTransformer, readModelConfig } from '../../model/load.js';
import { choiceFlag, parseCommandLine, positiveIntFlag, usageError } from '../cli-args.js';
import type { CliCommand, CliIo } from '../cli-io.js';
import { kernelsFlag, openModelFile, startBackend } from '../model-file.js';

const USAGE =
  'webgguf profile <model.gguf> [--backend webgpu] [--kernels auto|hardware|software|hardware-nosubgroups] [--f32] [--prefill N (chunk tokens, default 64)] [--top-k K (decode samples by top-k instead of argmax)] [--json]';

/** What the profiler needs of the backend (WebGpuOps). */
interface ProfilingOps {
  readonly description: string;
  readonly kernelSet: 'hardware' | 'software';
  beginProfile(): void;
  endProfile(layers: number, tokens: number): StepProfile;
}

function isProfilingOps(ops: object): ops is ProfilingOps {
  return typeof (ops as Partial<ProfilingOps>).beginProfile === 'function';
}

async function run(args: string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseCommandLine(
    args,
    {
      backend: { type: 'string', short: 'b' },
      kernels: { type: 'string' },
      f32: { type: 'boolean' },
      prefill: { type: 'string' },
      'top-k': { type: 'string' },
      json: { type: 'boolean' },
    },
    USAGE,
  );
  if (positionals.length !== 1) throw usageError('profile: expected one model path', USAGE);
  const backend = choiceFlag('profile', '--backend', values.backend, ['webgpu'] as const);
  const kernels = kernelsFlag('profile', values.kernels, backend);
  const prefill = positiveIntFlag('profile', '--prefill', values.prefill) ?? 64;
  const topK = positiveIntFlag('profile', '--top-k', values['top-k']);

  const file = await openModelFile(positionals[0], io.signal);
  try {
    const config = readModelConfig(file.gguf);
    if (prefill + 1 > config.trainContextLength) {
      throw new LlmError(
        'context-overflow',
        `profile: --prefill ${prefill} + 1 decode token exceed the model's context of ${config.trainContextLength}`,
      );
    }
    const ops = await startBackend(backend, {
      signal: io.signal,
      ...(values.f32 ? { preferF16: false } : {}),
      ...(kernels ? { kernels } : {}),
    });
    try {
      if (!isProfilingOps(ops))
        throw new LlmError('invalid-request', `profile: backend ${ops.name} has no structural profiler`);
      const model = await loadTransformer(file.gguf, file.source, ops, {
        contextLength: prefill + 1,
        ubatchSize: prefill,
        signal: io.signal,
      });
      const tokens = Int32Array.from({ length: prefill }, (_, i) => (i * 7919 + 13) % config.vocabSize);
      // The decode step as greedy decode runs it: pipelined (its token written on the device by the previous
      // argmax) where the model can chain tokens, else with its token written by the host.
      const pipelined = model.canChainTokens;
      ops.beginProfile();
      await model.eval(tokens, 0, 0, { logits: 'last', signal: io.signal });
      const next = await (pipelined ? model.argmaxToInput() : model.argmax());
      const prefillProfile = ops.endProfile(config.nLayers, prefill);
      ops.beginProfile();
      if (pipelined && topK === undefined) await model.evalChained(prefill, 0, io.signal);
      else await model.eval(Int32Array.of(next), prefill, 0, { logits: 'last', signal: io.signal });
      if (topK !== undefined) await model.topK(topK);
      else await (pipelined ? model.argmaxToInput() : model.argmax());
      const decode = {
        position: prefill,
        pipelined: pipelined && topK === undefined,
        ...ops.endProfile(config.nLayers, 1),
      };
      const report = {
        model: file.path,
        backend: ops.description,
        kernels: ops.kernelSet,
        subgroupWidthAssumed: PROFILE_SUBGROUP_WIDTH,
        decode,
        prefill: prefillProfile,
      };
      if (values.json) io.out(JSON.stringify(report, null, 2) + '\n');
      else printSummary(io, report.backend, decode, prefillProfile);
      return 0;
    } finally {
      ops.destroy();
    }
  } finally {
    await file.source.close?.();
  }
}

function printSummary(io: CliIo, backend: string, decode: StepProfile, prefill: StepProfile): void {
  io.out(`backend: ${backend}\n`);
  for (const [label, p] of [
    ['decode token', decode],
    [`prefill chunk (${prefill.tokens} tokens)`, prefill],
  ] as const) {
    const minSg = Math.min(...p.matmuls.map((m) => m.subgroupsPerMiB));
    io.out(
      `${label}: ${p.dispatches} dispatches (${p.dispatchesPerLayer.toFixed(2)}/layer), ${p.submissions} submissions, ${p.readbackBytes} B read back, ` +
        `${p.hostTokenWrites} host token writes; ` +
        `weights loaded/logical ${(p.weightBytesLoaded / Math.max(1, p.weightBytesLogical)).toFixed(4)}; KV read/KV ${(p.kvBytesRead / Math.max(1, p.kvBytes)).toFixed(2)}; ` +
        `min subgroups per MiB ${minSg.toFixed(1)}\n`,
    );
  }
}

const command: CliCommand = { name: 'profile', usage: USAGE, run };
export default command;
