/**
 * The sentence-transformers dense layers some embedding models apply to the pooled vector (EmbeddingGemma:
 * `dense_2` n_embd → `dense_2_feat_out`, optional `dense_2.bias`, then `dense_3` back to n_embd; llama.cpp
 * `build_dense_out`, no activation between), read onto the host: they run once per sequence on one vector.
 */

import { LlmError } from '../errors.js';
import { GgmlType } from '../gguf/types.js';
import { getQuantType } from '../quant/index.js';
import type { ModelConfig } from './config.js';
import type { PooledProjection } from './pooling.js';
import type { WeightLoader } from './weight-loader.js';

/** A tensor's values as f32 rows ([rows, rowLength], dequantized). */
async function hostMatrix(loader: WeightLoader, name: string, shape: readonly number[]): Promise<Float32Array> {
  const { info, bytes } = await loader.readHost(name, shape);
  const rowLength = info.shape[0]!;
  const rows = info.nElements / rowLength;
  const rowBytes = info.byteLength / rows;
  const out = new Float32Array(info.nElements); // [rows, rowLength]
  for (let r = 0; r < rows; r++) {
    const src = bytes.subarray(r * rowBytes, (r + 1) * rowBytes);
    const dst = out.subarray(r * rowLength, (r + 1) * rowLength);
    if (info.type === GgmlType.F32) new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(src);
    else getQuantType(info.type).dequantizeRow(src, dst, rowLength);
  }
  return out;
}

/** The dense head of a model whose file has `dense_2.weight` / `dense_3.weight`; null otherwise. */
export async function denseHeadOf(loader: WeightLoader, c: ModelConfig): Promise<PooledProjection | null> {
  if (!loader.has('dense_2.weight') && !loader.has('dense_3.weight')) return null;
  if (!loader.has('dense_2.weight') || !loader.has('dense_3.weight')) {
    throw new LlmError('gguf-invalid', 'loading model: dense_2.weight and dense_3.weight come together', {
      details: { tensor: loader.has('dense_2.weight') ? 'dense_3.weight' : 'dense_2.weight' },
    });
  }
  const E = c.embeddingLength;
  const mid = loader.info('dense_2.weight').shape[1] ?? 0;
  return {
    dense2: await hostMatrix(loader, 'dense_2.weight', [E, mid]), // [mid, E]
    dense2Bias: loader.has('dense_2.bias') ? await hostMatrix(loader, 'dense_2.bias', [mid]) : null,
    dense3: await hostMatrix(loader, 'dense_3.weight', [mid, E]), // [E, mid]
    mid,
  };
}
