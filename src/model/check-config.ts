/**
 * `checkConfigAgainstTensors`: cross-checks the hyper-parameters a file declares against the tensors it holds, before
 * any memory plan or upload is sized by them, so a lying header fails as `gguf-invalid` naming the metadata key (not
 * as a missing tensor deep in the load, an out-of-memory crash, or garbage output). Also checks the metadata keys
 * outside the config that would otherwise be silently replaced (a non-string `tokenizer.chat_template`).
 */

import { LlmError } from '../errors.js';
import type { GgufFile, GgufTensorInfo } from '../gguf/types.js';
import { describeValue } from '../gguf/value-types.js';
import { layerTensorName, type TensorNames } from './arch/index.js';
import type { ModelConfig } from './config.js';
import { checkMoeTensors, moeTensorPatterns } from './check-moe.js';
import { describeLayers } from './layer-spec.js';

/** `blk.N.` tensor names: N is the layer. */
const LAYER_TENSOR = /^blk\.(\d{1,9})\./;
/** A dense FFN's bias (`blk.N.ffn_gate.bias`, `ffn_up.bias`, `ffn_down.bias`). */
const FFN_BIAS = /^blk\.\d{1,9}\.ffn_(gate|up|down)\.bias$/;

function invalid(
  message: string,
  key: string,
  value: number | string,
  extra: Record<string, string | number> = {},
): LlmError {
  return new LlmError('gguf-invalid', `loading model: ${message}; the model file is corrupt or hostile`, {
    details: { key, value, ...extra },
  });
}

/** Metadata keys read as text elsewhere that must be strings when present (a wrong type is not silently dropped). */
const STRING_KEYS = ['tokenizer.chat_template'] as const;

/**
 * Throws `gguf-invalid` naming the metadata key when the config cannot describe the tensors of `gguf`: `block_count`
 * beyond the layers present, an embedding width, head count/size, FFN width or vocabulary that disagrees with the
 * shapes of `token_embd`, layer 0's attention and FFN matrices. Runs on the header alone (no tensor data).
 */
export function checkConfigAgainstTensors(gguf: GgufFile, config: ModelConfig, names: TensorNames): void {
  const arch = config.arch;
  for (const key of STRING_KEYS) {
    if (Object.hasOwn(gguf.metadata, key) && typeof gguf.metadata[key] !== 'string') {
      throw new LlmError(
        'gguf-invalid',
        `loading model: metadata '${key}' should be a string, found ${describeValue(gguf.metadata[key])}; the model file is broken`,
        {
          details: { key },
        },
      );
    }
  }
  if (gguf.tensors.length === 0) {
    // A vocabulary-only GGUF (llama.cpp ships them for tokenizer tests): metadata and vocabulary, no weights.
    throw new LlmError(
      'gguf-invalid',
      'loading model: the file holds no tensors: no model weights (a vocabulary-only GGUF)',
      {
        details: { reason: 'no-weights' },
      },
    );
  }
  let layersPresent = 0;
  for (const t of gguf.tensors) {
    const m = LAYER_TENSOR.exec(t.name);
    if (m) layersPresent = Math.max(layersPresent, Number(m[1]) + 1);
  }
  const blockKey = `${arch}.block_count`;
  if (config.nLayers > layersPresent) {
    throw invalid(
      `'${blockKey}' is ${config.nLayers} but the file holds tensors for ${layersPresent} layer(s)`,
      blockKey,
      config.nLayers,
      { layersPresent },
    );
  }
  const byName = new Map<string, GgufTensorInfo>(gguf.tensors.map((t) => [t.name, t]));
  // Every layer's required tensors, before the download and upload that would otherwise stop at the first gap.
  if (!byName.has(names.outputNorm)) {
    throw new LlmError(
      'gguf-invalid',
      `loading model: tensor '${names.outputNorm}' is missing; the model file is incomplete`,
      { details: { tensor: names.outputNorm } },
    );
  }
  const ffnRequired = [
    ...(config.preNorms ? [names.attnNorm, names.ffnNorm] : []),
    ...(config.fusedGateUp ? [names.ffnUp] : [names.ffnGate, names.ffnUp]),
    names.ffnDown,
    ...(config.postNorms ? [names.postAttnNorm, names.postFfnNorm] : []),
  ];
  const required = [
    ...ffnRequired,
    ...(config.fusedQkv ? [names.attnQkv] : [names.attnQ, names.attnK, ...(config.valueNorm ? [] : [names.attnV])]),
    names.attnOut,
    ...(config.qkNorm ? [names.attnQNorm, names.attnKNorm] : []),
    ...(config.attnSinks ? [names.attnSinks] : []),
  ];
  const convRequired = [...ffnRequired, names.shortConv, names.shortConvInProj, names.shortConvOutProj];
  // A mixture-of-experts layer has the router and expert stacks in place of the dense FFN.
  const dense = new Set([names.ffnGate, names.ffnUp, names.ffnDown]);
  const moeRequired = config.moe
    ? [...required.filter((t) => !dense.has(t)), ...moeTensorPatterns(config.moe, names)]
    : required;
  const perLayer = config.perLayerEmbd > 0 ? [names.perLayerInpGate, names.perLayerProj, names.perLayerPostNorm] : [];
  // A layer reading an earlier layer's KV needs no K/V of its own (gemma4).
  const kvOnly = new Set([names.attnK, names.attnKNorm, names.attnV]);
  const n = names;
  const deltaNetRequired = [...ffnRequired, n.attnQkv, n.ssmGate, n.ssmConv1d, n.ssmDt, n.ssmA, n.ssmBeta, n.ssmAlpha];
  deltaNetRequired.push(n.ssmNorm, n.ssmOut);
  const mamba2Mixer = [n.attnNorm, n.ffnNorm, n.ssmIn, n.ssmConv1d, n.ssmDt, n.ssmA, n.ssmD, n.ssmNorm, n.ssmOut];
  const attnOnly = new Set([n.attnQ, n.attnK, n.attnV, n.attnQkv, n.attnOut, n.attnQNorm, n.attnKNorm]);
  const ffnOnly = new Set([n.ffnNorm, n.ffnGate, n.ffnUp, n.ffnDown]); // absent where a layer has no FFN (nemotron_h)
  for (let il = 0; il < config.nLayers; il++) {
    const noFfn = config.layerFfnDims[il] === 0 && !config.moe?.layerIsMoe[il];
    const attention = [...(config.moe?.layerIsMoe[il] ? moeRequired : required), ...perLayer].filter(
      (p) => (config.kvSources[il] === il || !kvOnly.has(p)) && !(noFfn && ffnOnly.has(p)),
    );
    const convOrDelta = config.shortConvLayers[il] ? convRequired : config.deltaNetLayers[il] ? deltaNetRequired : null;
    // A recurrent layer's FFN is dense or a mixture of experts too (lfm2moe, qwen35moe).
    const recurrent =
      convOrDelta !== null && config.moe?.layerIsMoe[il]
        ? [...convOrDelta.filter((t) => !dense.has(t)), ...moeTensorPatterns(config.moe, names)]
        : convOrDelta;
    const patterns =
      config.mamba2Parallel && config.mamba2Layers[il]
        ? [...attention, n.ssmIn, n.ssmConv1d, n.ssmDt, n.ssmA, n.ssmD, n.ssmOut]
        : config.mlpLayers[il]
          ? [n.attnNorm, ...(config.moe?.layerIsMoe[il] ? moeTensorPatterns(config.moe, names) : [n.ffnUp, n.ffnDown])]
          : config.mamba2Layers[il]
            ? [...mamba2Mixer, ...attention.filter((p) => !attnOnly.has(p))].filter((p) => !(noFfn && ffnOnly.has(p)))
            : (recurrent ?? attention);
    for (const pattern of patterns) {
      const name = layerTensorName(pattern, il);
      if (!byName.has(name)) {
        throw new LlmError(
          'gguf-invalid',
          `loading model: tensor '${name}' is missing (${blockKey} = ${config.nLayers}); the model file is incomplete`,
          {
            details: { tensor: name, key: blockKey },
          },
        );
      }
    }
  }
  // llama.cpp adds optional FFN biases (granite, mistral3, llama); the forward pass has none, so refuse rather than
  // silently drop them.
  const ffnBias = gguf.tensors.find((t) => FFN_BIAS.test(t.name));
  if (ffnBias) {
    throw new LlmError(
      'unsupported-arch',
      `loading model: tensor '${ffnBias.name}': feed-forward biases are not supported yet (this ${arch} file has them)`,
      { details: { tensor: ffnBias.name, arch } },
    );
  }
  const embd = byName.get(names.tokenEmbd);
  if (embd === undefined || embd.shape.length !== 2) {
    throw new LlmError('gguf-invalid', `loading model: tensor '${names.tokenEmbd}' is missing or not 2-D`, {
      details: { tensor: names.tokenEmbd },
    });
  }
  const embdKey = `${arch}.embedding_length`;
  if (embd.shape[0] !== config.embeddingLength) {
    throw invalid(
      `'${embdKey}' is ${config.embeddingLength} but '${names.tokenEmbd}' rows have ${embd.shape[0]} values`,
      embdKey,
      config.embeddingLength,
    );
  }
  const headsKey = `${arch}.attention.head_count`;
  const kvKey = `${arch}.attention.head_count_kv`;
  const headDimKeys = `'${arch}.attention.key_length' (or ${embdKey} / head_count)`;
  const specs = describeLayers(config);
  const firstAttn = Math.max(
    0,
    specs.findIndex((l) => l.kind === 'attention'),
  ); // layer whose q/k shapes are checked
  const spec0 = specs[firstAttn];
  // the per-layer values of the first attention layer (a model of only recurrent layers checks nothing here)
  const layer0 =
    spec0.kind === 'attention' ? spec0 : { nHeads: config.nHeads, nKvHeads: config.nKvHeads, headDim: config.headDim };
  const q = byName.get(layerTensorName(names.attnQ, firstAttn));
  const qRows = layer0.nHeads * layer0.headDim * (config.attnOutputGate ? 2 : 1); // gated: [q | gate] per head
  if (!config.fusedQkv && q !== undefined && q.shape.length === 2 && q.shape[1] !== qRows) {
    throw invalid(
      `'${headsKey}' = ${layer0.nHeads} × head size ${layer0.headDim} (${headDimKeys}) = ${qRows} query rows${config.attnOutputGate ? ' (with their output gates)' : ''}, ` +
        `but '${q.name}' has ${q.shape[1]}`,
      headsKey,
      layer0.nHeads,
    );
  }
  const k = byName.get(layerTensorName(names.attnK, firstAttn));
  if (!config.fusedQkv && k !== undefined && k.shape.length === 2 && k.shape[1] !== layer0.nKvHeads * layer0.headDim) {
    throw invalid(
      `'${kvKey}' = ${layer0.nKvHeads} × head size ${layer0.headDim} = ${layer0.nKvHeads * layer0.headDim} key rows, but '${k.name}' has ${k.shape[1]}`,
      kvKey,
      layer0.nKvHeads,
    );
  }
  const qkv = byName.get(layerTensorName(names.attnQkv, 0));
  const qkvRows = (layer0.nHeads + 2 * layer0.nKvHeads) * layer0.headDim;
  if (config.fusedQkv && qkv !== undefined && qkv.shape.length === 2 && qkv.shape[1] !== qkvRows) {
    throw invalid(
      `'${headsKey}', '${kvKey}' and the head size give ${qkvRows} fused QKV rows, but '${qkv.name}' has ${qkv.shape[1]}`,
      headsKey,
      layer0.nHeads,
    );
  }
  if (config.moe) checkMoeTensors(byName, config, config.moe, names);
  const ffnKey = `${arch}.feed_forward_length`;
  const down = byName.get(layerTensorName(names.ffnDown, 0));
  if (down !== undefined && down.shape.length === 2 && down.shape[0] !== specs[0].ffnDim) {
    throw invalid(
      `'${ffnKey}' is ${specs[0].ffnDim} but '${down.name}' rows have ${down.shape[0]} values`,
      ffnKey,
      specs[0].ffnDim,
    );
  }
}
