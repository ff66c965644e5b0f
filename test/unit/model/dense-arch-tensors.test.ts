/**
 * The header checks of the dense architectures added for issue 14, on tensor tables alone (no data): an olmo2 file
 * needs no pre-norms but its post-norms and q/k norms, a missing one is `gguf-invalid` naming it, and FFN biases
 * (which llama.cpp would add) are refused as `unsupported-arch` instead of being silently dropped.
 */

import { describe, expect, it } from 'vitest';
import { GgmlType, type GgufFile, type GgufTensorInfo, type GgufValue } from '../../../src/gguf/types.js';
import { getArchitecture } from '../../../src/model/arch/index.js';
import { checkConfigAgainstTensors } from '../../../src/model/check-config.js';
import { thrownLlmError } from '../../helpers/llm-error.js';

const N_EMBD = 64;
const N_FF = 128;

function tensor(name: string, shape: number[]): GgufTensorInfo {
  const n = shape.reduce((a, b) => a * b, 1);
  return { name, type: GgmlType.F32, shape, offset: 0, byteLength: 4 * n, nElements: n };
}

/** An olmo2 header with two layers (no attn_norm / ffn_norm), minus `drop`, plus `add`. */
function olmo2File(drop: readonly string[] = [], add: readonly GgufTensorInfo[] = []): GgufFile {
  const layer = (il: number): GgufTensorInfo[] =>
    [
      ['attn_q.weight', [N_EMBD, N_EMBD]],
      ['attn_k.weight', [N_EMBD, N_EMBD]],
      ['attn_v.weight', [N_EMBD, N_EMBD]],
      ['attn_output.weight', [N_EMBD, N_EMBD]],
      ['attn_q_norm.weight', [N_EMBD]],
      ['attn_k_norm.weight', [N_EMBD]],
      ['post_attention_norm.weight', [N_EMBD]],
      ['ffn_gate.weight', [N_EMBD, N_FF]],
      ['ffn_up.weight', [N_EMBD, N_FF]],
      ['ffn_down.weight', [N_FF, N_EMBD]],
      ['post_ffw_norm.weight', [N_EMBD]],
    ].map(([name, shape]) => tensor(`blk.${il}.${name as string}`, shape as number[]));
  const tensors = [
    tensor('token_embd.weight', [N_EMBD, 32]),
    ...layer(0),
    ...layer(1),
    tensor('output_norm.weight', [N_EMBD]),
    ...add,
  ].filter((t) => !drop.includes(t.name));
  const metadata: Record<string, GgufValue> = {
    'general.architecture': 'olmo2',
    'olmo2.embedding_length': N_EMBD,
    'olmo2.block_count': 2,
    'olmo2.attention.head_count': 4,
    'olmo2.feed_forward_length': N_FF,
  };
  return { version: 3, metadata, metadataTypes: {}, tensors, alignment: 32, tensorDataOffset: 0, fileSize: 0 };
}

function check(file: GgufFile): void {
  const arch = getArchitecture('olmo2');
  checkConfigAgainstTensors(file, arch.config(file.metadata), arch.tensors);
}

describe('dense architectures: tensor table checks', () => {
  it('olmo2 needs no pre-norms', () => {
    expect(() => check(olmo2File())).not.toThrow();
  });

  it('a missing post-norm or q/k norm is gguf-invalid naming the tensor', () => {
    for (const name of ['blk.1.post_ffw_norm.weight', 'blk.0.attn_k_norm.weight']) {
      const err = thrownLlmError(() => check(olmo2File([name])));
      expect(err.code).toBe('gguf-invalid');
      expect(err.message).toContain(`'${name}'`);
    }
  });

  it('FFN biases are unsupported-arch naming the tensor, not silently dropped', () => {
    const err = thrownLlmError(() => check(olmo2File([], [tensor('blk.1.ffn_down.bias', [N_EMBD])])));
    expect(err.code).toBe('unsupported-arch');
    expect(err.message).toContain("'blk.1.ffn_down.bias'");
  });
});
