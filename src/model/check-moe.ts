/**
 * `checkMoeTensors`: the mixture-of-experts part of `checkConfigAgainstTensors` — every layer's router and expert
 * stacks must have the shapes `expert_count`, `expert_feed_forward_length` and `embedding_length` imply (llama.cpp
 * `create_tensor` shapes), so a lying header fails as `gguf-invalid` naming the key (or the tensor) before upload.
 */

import { LlmError } from '../errors.js';
import type { GgufTensorInfo } from '../gguf/types.js';
import { layerTensorName, type TensorNames } from './arch/index.js';
import type { ModelConfig } from './config.js';
import type { MoeConfig } from './moe-config.js';

/** The per-layer tensor patterns a MoE layer requires (in place of the dense FFN's). */
export function moeTensorPatterns(moe: MoeConfig, names: TensorNames): string[] {
  return [
    names.ffnGateInp,
    ...(moe.fusedGateUp
      ? [names.ffnGateUpExps]
      : moe.ungated
        ? [names.ffnUpExps]
        : [names.ffnGateExps, names.ffnUpExps]),
    names.ffnDownExps,
    ...(moe.shared === 'none' ? [] : moe.ungated ? [] : [names.ffnGateShexp]),
    ...(moe.shared === 'none' ? [] : [names.ffnUpShexp, names.ffnDownShexp]),
    ...(moe.shared === 'gated' ? [names.ffnGateInpShexp] : []),
    ...(moe.oai ? [names.ffnGateInpBias, names.ffnGateExpsBias, names.ffnUpExpsBias, names.ffnDownExpsBias] : []),
    ...(moe.requireSelectionBias ? [names.ffnExpProbsB] : []),
    ...(moe.branchNorms ? [names.ffnGateInpScale, names.ffnPreNorm2, names.ffnPostNorm1, names.ffnPostNorm2] : []),
  ];
}

/** The routing selection bias (`exp_probs_b`, ernie4_5-moe) must have one value per expert when present. */
function checkSelectionBias(
  byName: ReadonlyMap<string, GgufTensorInfo>,
  moe: MoeConfig,
  names: TensorNames,
  il: number,
  arch: string,
): void {
  const name = layerTensorName(names.ffnExpProbsB, il);
  const t = byName.get(name);
  if (t === undefined || (t.shape.length === 1 && t.shape[0] === moe.nExperts)) return;
  const key = `${arch}.expert_count`;
  throw new LlmError(
    'gguf-invalid',
    `loading model: tensor '${name}' has shape [${t.shape.join(', ')}], but '${key}' = ${moe.nExperts} implies [${moe.nExperts}]`,
    { details: { tensor: name, key } },
  );
}

/** Throws `gguf-invalid` naming the key whose value disagrees with a MoE tensor's shape (tensors are present). */
export function checkMoeTensors(
  byName: ReadonlyMap<string, GgufTensorInfo>,
  config: ModelConfig,
  moe: MoeConfig,
  names: TensorNames,
): void {
  const k = (suffix: string): string => `${config.arch}.${suffix}`;
  const e = config.embeddingLength;
  const fk = moe.expertWidthKey ?? 'expert_feed_forward_length';
  for (let il = 0; il < config.nLayers; il++) {
    if (!moe.layerIsMoe[il]) continue;
    const f = moe.layerExpertDims[il];
    const gateUp: [string, readonly number[], readonly string[]][] = moe.fusedGateUp
      ? [[names.ffnGateUpExps, [e, 2 * f, moe.nExperts], ['embedding_length', fk, 'expert_count']]]
      : [
          [names.ffnGateExps, [e, f, moe.nExperts], ['embedding_length', fk, 'expert_count']],
          [names.ffnUpExps, [e, f, moe.nExperts], ['embedding_length', fk, 'expert_count']],
        ];
    const checks: [string, readonly number[], readonly string[]][] = [
      [names.ffnGateInp, [e, moe.nExperts], ['embedding_length', 'expert_count']],
      ...gateUp,
      [names.ffnDownExps, [f, e, moe.nExperts], [fk, 'embedding_length', 'expert_count']],
    ];
    if (moe.shared !== 'none') {
      const s = moe.sharedDim;
      const sk = 'expert_shared_feed_forward_length';
      checks.push(
        [names.ffnGateShexp, [e, s], ['embedding_length', sk]],
        [names.ffnUpShexp, [e, s], ['embedding_length', sk]],
        [names.ffnDownShexp, [s, e], [sk, 'embedding_length']],
      );
    }
    if (moe.shared === 'gated') checks.push([names.ffnGateInpShexp, [e], ['embedding_length']]);
    if (moe.oai) {
      checks.push(
        [names.ffnGateInpBias, [moe.nExperts], ['expert_count']],
        [names.ffnGateExpsBias, [f, moe.nExperts], [fk, 'expert_count']],
        [names.ffnUpExpsBias, [f, moe.nExperts], [fk, 'expert_count']],
        [names.ffnDownExpsBias, [e, moe.nExperts], ['embedding_length', 'expert_count']],
      );
    }
    checkSelectionBias(byName, moe, names, il, config.arch);
    for (const [pattern, want, keys] of checks) {
      const name = layerTensorName(pattern, il);
      const t = byName.get(name);
      if (t === undefined) continue; // missing tensors are reported by the caller
      const dim = t.shape.length !== want.length ? -1 : want.findIndex((d, i) => t.shape[i] !== d);
      if (dim === -1 && t.shape.length === want.length) continue;
      const key = dim >= 0 ? k(keys[dim]) : k('expert_count');
      throw new LlmError(
        'gguf-invalid',
        `loading model: tensor '${name}' has shape [${t.shape.join(', ')}], but '${key}' and the other hyper-parameters ` +
          `imply [${want.join(', ')}]; the model file is corrupt or hostile`,
        { details: { tensor: name, key, shape: t.shape.join(','), expected: want.join(',') } },
      );
    }
  }
}
