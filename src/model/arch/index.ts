/**
 * The architecture registry: one entry per supported `general.architecture`. Adding an architecture means one file
 * in this folder and one line in `ARCHITECTURES`; tests iterate over this list.
 */

import { LlmError } from '../../errors.js';
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
import { bert } from './bert.js';
import { nomicBert } from './nomic-bert.js';
import { jinaBertV3 } from './jina-bert-v3.js';
import { gemmaEmbedding } from './gemma-embedding.js';
import { nomicBertMoe } from './nomic-bert-moe.js';
import { modernBert } from './modern-bert.js';
import { jinaBertV2 } from './jina-bert-v2.js';
import { qwen2vl } from './qwen2vl.js';
import { qwen3vl } from './qwen3vl.js';

export type { Architecture, TensorNames } from './architecture.js';
export { layerTensorName } from './architecture.js';

/** Every supported architecture. */
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
  bert,
  nomicBert,
  jinaBertV3,
  gemmaEmbedding,
  nomicBertMoe,
  modernBert,
  jinaBertV2,
  qwen2vl,
  qwen3vl,
  nemotronHMoe,
];

/** The entry for `general.architecture = name`; `LlmError('unsupported-arch')` naming it otherwise. */
export function getArchitecture(name: string): Architecture {
  const arch = ARCHITECTURES.find((a) => a.name === name);
  if (!arch) {
    throw new LlmError(
      'unsupported-arch',
      `loading model: architecture '${name}' is not supported (supported: ${ARCHITECTURES.map((a) => a.name).join(', ')})`,
      { details: { arch: name, supported: ARCHITECTURES.map((a) => a.name) } },
    );
  }
  return arch;
}
