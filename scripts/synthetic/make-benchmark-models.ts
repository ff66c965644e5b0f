/**
 * Generates (or finds in the cache) the random-weight benchmark models the bench scripts use, and prints their paths.
 * Usage: node scripts/run-ts.mjs scripts/synthetic/make-benchmark-models.ts [shape] [quant…]
 *   defaults: shape qwen2.5-0.5b, quants q4_0 q8_0 q4_k. Cache: $WEBGGUF_CACHE or ~/.cache/webgguf/synthetic.
 */

import { makeSyntheticModel } from '../synthetic-model.js';

/** CLI entry (scripts/run-ts.mjs). */
export async function main(args: string[]): Promise<number> {
  const shape = (args[0] ?? 'qwen2.5-0.5b') as 'qwen2.5-0.5b' | 'llama-3.2-1b' | 'tiny';
  const quants = args.length > 1 ? args.slice(1) : ['q4_0', 'q8_0', 'q4_k'];
  for (const quant of quants) {
    const t0 = performance.now();
    const file = await makeSyntheticModel({ shape, quant });
    console.log(`${file} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  }
  return 0;
}
