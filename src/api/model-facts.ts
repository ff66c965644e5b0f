/** What a person wants to know of a loaded model that its header alone tells: size in parameters, quantization. */
import type { GgufFile } from '../gguf/types.js';
import { GgmlType } from '../gguf/types.js';

/** Parameters (tensor elements) and the quantization of a model. */
export interface ModelFacts {
  /** Elements of every tensor in the file (what "0.5B" counts). */
  readonly parameterCount: number;
  /**
   * The ggml type holding most of the matrix weights (2-D or larger tensors), e.g. `Q4_K`; with `(mixed)` appended
   * when other types hold over a tenth of them (Q4_K_M files keep some Q6_K/Q5_0 rows).
   */
  readonly quantization: string;
}

/** Computes `ModelFacts` from the header's tensor table. */
export function modelFactsOf(gguf: GgufFile): ModelFacts {
  let parameterCount = 0;
  let matrixElements = 0;
  const byType = new Map<GgmlType, number>();
  for (const t of gguf.tensors) {
    parameterCount += t.nElements;
    if (t.shape.length < 2) continue;
    matrixElements += t.nElements;
    byType.set(t.type, (byType.get(t.type) ?? 0) + t.nElements);
  }
  let main: GgmlType | null = null;
  for (const [type, n] of byType) if (main === null || n > byType.get(main)!) main = type;
  if (main === null) return { parameterCount, quantization: 'none' };
  const share = byType.get(main)! / matrixElements;
  return { parameterCount, quantization: `${GgmlType[main]}${share < 0.9 ? ' (mixed)' : ''}` };
}
