/**
 * Decode time per greedy step with and without pipelining (not gating): `plain` reads each token back before
 * recording the next step (host token write), `pipelined` leaves it on the device (`argmaxToInput` + `evalChained`)
 * and submits step N+1 before token N is read back. Both must reach the same last token. Modes alternate so a
 * machine's drift hits both; the first round of each includes its one-time bind-group creation.
 * Usage: node scripts/run-ts.mjs test/bench/pipelined-decode.bench.ts <model.gguf> [steps=64]
 *   [modes=pipelined,plain,pipelined,plain,pipelined] [auto|hardware|software]
 */

import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { nodeGpu } from './node-gpu.js';

/** Runs the benchmark; returns the process exit status. */
export async function main(args: string[]): Promise<number> {
  if (!args[0]) {
    console.error('usage: pipelined-decode.bench.ts <model.gguf> [steps] [modes] [kernels]');
    return 2;
  }
  const source = await NodeFileSource.open(args[0]);
  const gguf = await parseGguf(source);
  const kernels = (args[3] ?? 'hardware') as 'auto' | 'hardware' | 'software';
  const ops = await createWebGpuOps({ gpu: await nodeGpu(), kernels });
  const model = await loadTransformer(gguf, source, ops, { contextLength: 512, ubatchSize: 32 });
  const steps = Number(args[1] ?? 64);
  const prompt = Int32Array.of(1, 2, 3, 4); // [4] placeholder prompt
  for (const mode of (args[2] ?? 'pipelined,plain,pipelined,plain,pipelined').split(',')) {
    await model.eval(prompt, 0, 0, { logits: 'last' });
    const t0 = performance.now();
    let tok: number;
    if (mode === 'plain') {
      tok = await model.argmax();
      for (let i = 0; i < steps; i++) {
        await model.eval(Int32Array.of(tok), prompt.length + i, 0);
        tok = await model.argmax();
      }
    } else {
      let pending = model.argmaxToInput();
      for (let i = 0; i < steps; i++) {
        await model.evalChained(prompt.length + i, 0);
        const next = model.argmaxToInput();
        await pending;
        pending = next;
      }
      tok = await pending;
    }
    console.log(`${mode}: ${((performance.now() - t0) / steps).toFixed(2)} ms/step, last token ${tok}`);
  }
  model.destroy();
  await source.close?.();
  return 0;
}
