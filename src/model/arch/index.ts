/**
 * The architecture registry: one entry per supported `general.architecture`. Adding an architecture means one file
 * in this folder and one line in `ARCHITECTURES`; tests iterate over this list.
 */

import { LlmError } from '../../errors.js';
import { loadChunk } from '../../io/load-chunk.js';
import type { Architecture } from './architecture.js';
import { ernie4_5Moe } from './ernie4_5-moe.js';
import { ernie4_5 } from './ernie4_5.js';
import { exaone4 } from './exaone4.js';
import { gemma } from './gemma.js';
import { gemma2 } from './gemma2.js';
import { gemma3 } from './gemma3.js';
import { gemma4 } from './gemma4.js';
import { gemma3n } from './gemma3n.js';
import { granite } from './granite.js';
import { granitemoe } from './granitemoe.js';
import { lfm2 } from './lfm2.js';
import { hunyuanDense } from './hunyuan-dense.js';
import { mistral3 } from './mistral3.js';
import { llama } from './llama.js';
import { olmoe } from './olmoe.js';
import { olmo2 } from './olmo2.js';
import { phi3 } from './phi3.js';
import { qwen2 } from './qwen2.js';
import { qwen3 } from './qwen3.js';
import { qwen2moe } from './qwen2moe.js';
import { qwen3moe } from './qwen3moe.js';
import { qwen35 } from './qwen35.js';
import { granitehybrid } from './granitehybrid.js';
import { nemotronH } from './nemotron_h.js';
import { nemotronHMoe } from './nemotron_h_moe.js';
import { falconH1 } from './falcon-h1.js';
import { smollm3 } from './smollm3.js';
import { gptOss } from './gpt-oss.js';
import { lfm2moe } from './lfm2moe.js';
import { qwen35moe } from './qwen35moe.js';
import { qwen2vl } from './qwen2vl.js';
import { qwen3vl } from './qwen3vl.js';

export type { Architecture, TensorNames } from './architecture.js';
export { layerTensorName } from './architecture.js';

/** Every architecture whose entry is part of the main download (the lazily loaded ones: LAZY_ARCHITECTURES). */
export const ARCHITECTURES: readonly Architecture[] = [
  llama,
  qwen2,
  qwen3,
  phi3,
  gemma2,
  gemma3,
  gemma4,
  smollm3,
  olmo2,
  granite,
  exaone4,
  lfm2,
  ernie4_5,
  hunyuanDense,
  gemma,
  mistral3,
  qwen3moe,
  qwen2moe,
  olmoe,
  ernie4_5Moe,
  granitemoe,
  qwen35,
  gptOss,
  gemma3n,
  granitehybrid,
  nemotronH,
  falconH1,
  lfm2moe,
  qwen35moe,
  qwen2vl,
  qwen3vl,
  nemotronHMoe,
];

/**
 * Architectures whose entry is fetched on demand (a small chunk each in the browser builds): the encoder and
 * embedding models, which a chat page never loads. `loadArchitecture` imports one; `getArchitecture` then returns it.
 */
const LAZY_ARCHITECTURES: Readonly<Record<string, () => Promise<Architecture>>> = {
  bert: () => import('./bert.js').then((m) => m.bert),
  'nomic-bert': () => import('./nomic-bert.js').then((m) => m.nomicBert),
  'jina-bert-v3': () => import('./jina-bert-v3.js').then((m) => m.jinaBertV3),
  'gemma-embedding': () => import('./gemma-embedding.js').then((m) => m.gemmaEmbedding),
  'nomic-bert-moe': () => import('./nomic-bert-moe.js').then((m) => m.nomicBertMoe),
  'modern-bert': () => import('./modern-bert.js').then((m) => m.modernBert),
  'jina-bert-v2': () => import('./jina-bert-v2.js').then((m) => m.jinaBertV2),
};

/** The lazily loaded entries imported so far, by name. */
const loaded = new Map<string, Architecture>();

/** The name of every supported architecture, lazily loaded ones included. */
export function architectureNames(): string[] {
  return [...ARCHITECTURES.map((a) => a.name), ...Object.keys(LAZY_ARCHITECTURES)];
}

/**
 * Imports the entry of `general.architecture = name` when it is one of the lazily loaded ones (once); nothing for
 * the others or for a value that is not a supported name (`getArchitecture` reports those).
 * @throws LlmError('network') when the entry's chunk cannot be fetched.
 */
export async function loadArchitecture(name: unknown): Promise<void> {
  if (typeof name !== 'string' || !Object.hasOwn(LAZY_ARCHITECTURES, name) || loaded.has(name)) return;
  loaded.set(name, await loadChunk(`'${name}' architecture`, LAZY_ARCHITECTURES[name]!));
}

/**
 * The entry for `general.architecture = name`; `LlmError('unsupported-arch')` naming it otherwise, and
 * `LlmError('invalid-request')` for a lazily loaded one before `loadArchitecture(name)` (createEngine and the model
 * loaders await it).
 */
export function getArchitecture(name: string): Architecture {
  const arch = ARCHITECTURES.find((a) => a.name === name) ?? loaded.get(name);
  if (arch) return arch;
  if (Object.hasOwn(LAZY_ARCHITECTURES, name)) {
    throw new LlmError(
      'invalid-request',
      `loading model: the '${name}' architecture's code is not loaded yet; await loadArchitecture('${name}') first (createEngine and loadAnyModel do)`,
      { details: { arch: name } },
    );
  }
  const supported = architectureNames();
  throw new LlmError(
    'unsupported-arch',
    `loading model: architecture '${name}' is not supported (supported: ${supported.join(', ')})`,
    { details: { arch: name, supported } },
  );
}
