/**
 * Architectures the fixture tool writes from scratch (`arch-spec.ts`), by `general.architecture`. The first six
 * (llama, qwen2, qwen3, phi3, gemma2, gemma3) start from their shared fixtures instead (`arch-plan.ts`).
 */

import type { SyntheticArchSpec } from '../arch-spec.js';
import { ernie4_5Moe } from './ernie4_5-moe.js';
import { olmoe } from './olmoe.js';
import { qwen2moe } from './qwen2moe.js';
import { qwen3moe } from './qwen3moe.js';
import { ernie4_5 } from './ernie4_5.js';
import { exaone4 } from './exaone4.js';
import { gemma } from './gemma.js';
import { gemma4 } from './gemma4.js';
import { gemma3n } from './gemma3n.js';
import { granite } from './granite.js';
import { granitemoe } from './granitemoe.js';
import { hunyuanDense } from './hunyuan-dense.js';
import { mistral3 } from './mistral3.js';
import { olmo2 } from './olmo2.js';
import { lfm2 } from './lfm2.js';
import { qwen35 } from './qwen35.js';
import { granitehybrid } from './granitehybrid.js';
import { nemotronH } from './nemotron_h.js';
import { nemotronHMoe } from './nemotron_h_moe.js';
import { falconH1 } from './falcon-h1.js';
import { bert } from './bert.js';
import { nomicBert } from './nomic-bert.js';
import { jinaBertV3 } from './jina-bert-v3.js';
import { gemmaEmbedding } from './gemma-embedding.js';
import { smollm3 } from './smollm3.js';
import { gptOss } from './gpt-oss.js';
import { lfm2moe } from './lfm2moe.js';
import { qwen35moe } from './qwen35moe.js';
import { nomicBertMoe } from './nomic-bert-moe.js';
import { modernBert } from './modern-bert.js';
import { jinaBertV2 } from './jina-bert-v2.js';
import { qwen2vl, qwen3vl } from './qwen2vl.js';

/** Every spec, by name. */
export const ARCH_SPECS: ReadonlyMap<string, SyntheticArchSpec> = new Map(
  [
    smollm3,
    olmo2,
    granite,
    exaone4,
    ernie4_5,
    hunyuanDense,
    gemma,
    mistral3,
    lfm2,
    qwen3moe,
    qwen2moe,
    olmoe,
    ernie4_5Moe,
    granitemoe,
    gemma4,
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
  ].map((spec) => [spec.name, spec]),
);
