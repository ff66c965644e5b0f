/**
 * `moeVariant`: the MoE variant of a dense spec (lfm2 → lfm2moe, qwen35 → qwen35moe), as llama.cpp's MoE variants of
 * hybrid families are the dense graph with the FFN of chosen layers swapped for experts: the base spec's keys under
 * the new name (minus the ones the variant does not read), and on each MoE layer the dense `ffn_{gate,up,down}`
 * replaced by `ffn` (router, expert stacks, …) in their place.
 */

import type { SpecMetadata, SyntheticArchSpec } from '../arch-spec.js';
import type { ModelShape, TensorPlan } from '../arch-plan.js';

const DENSE_FFN = /^blk\.(\d+)\.ffn_(gate|up|down)\.weight$/;

/** Options of `moeVariant`. */
interface MoeVariantOptions {
  readonly name: string;
  readonly shape: ModelShape;
  /** Whether layer `il` routes to experts. */
  readonly isMoe: (s: ModelShape, il: number) => boolean;
  /** The tensors of a MoE layer's FFN (after its pre-norm). */
  readonly ffn: (s: ModelShape, il: number) => TensorPlan[];
  /** Keys of the variant beyond the base spec's (renamed) ones; null removes one. */
  readonly metadata: (s: ModelShape) => SpecMetadata;
}

/** The MoE variant of `base`. */
export function moeVariant(base: SyntheticArchSpec, o: MoeVariantOptions): SyntheticArchSpec {
  const prefix = `${base.name}.`;
  return {
    name: o.name,
    shape: o.shape,
    metadata: (s) => {
      const renamed: Record<string, SpecMetadata[string]> = {};
      for (const [key, value] of Object.entries(base.metadata(s))) {
        renamed[key.startsWith(prefix) ? `${o.name}.${key.slice(prefix.length)}` : key] = value;
      }
      return { ...renamed, ...o.metadata(s) };
    },
    tensors: (s) => {
      const out: TensorPlan[] = [];
      for (const t of base.tensors(s)) {
        const m = DENSE_FFN.exec(t.name);
        const il = m ? Number(m[1]) : -1;
        if (!m || !o.isMoe(s, il)) out.push(t);
        else if (m[2] === 'gate') out.push(...o.ffn(s, il)); // the experts where the dense gate was
      }
      return out;
    },
  };
}
