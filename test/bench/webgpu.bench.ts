/**
 * WebGPU decode benchmark (not gating): loads a model on the WebGPU backend (Node: Dawn, lavapipe when installed),
 * prefills the reference prompt, then greedy-decodes with the argmax on the GPU and reports, per decode step:
 * dispatches, submissions, bytes read back, host recording time (eval() alone: the GPU idles meanwhile), and decode
 * tokens/s (median of 3 runs), for the f16 and f32 paths.
 * Usage: node scripts/run-ts.mjs test/bench/webgpu.bench.ts [model.gguf] [decodeTokens] [variant name|all] [auto|hardware|software]
 */

import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { getTestGpu, GPU_VARIANTS } from '../helpers/gpu.js';
import { sharedPath } from '../helpers/shared-path.js';

function median(v: number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

/** Runs the benchmark; returns the process exit status. */
export async function main(args: string[]): Promise<number> {
  const path = args[0] ?? sharedPath('models', 'stories260K.gguf');
  const nDecode = Number(args[1] ?? 100);
  const gpu = await getTestGpu();
  const only = args[2] === 'all' ? undefined : args[2]; // a variant name ('f16+subgroups', 'f32+shared') to run only that one
  const kernels = (args[3] ?? 'auto') as 'auto' | 'hardware' | 'software'; // kernel set
  for (const variant of GPU_VARIANTS.filter((v) => !only || v.name === only)) {
    const source = await NodeFileSource.open(path);
    const gguf = await parseGguf(source);
    const ops = await createWebGpuOps({
      gpu,
      preferF16: variant.preferF16,
      useSubgroups: variant.useSubgroups,
      kernels,
    });
    const model = await loadTransformer(gguf, source, ops, { contextLength: 512, ubatchSize: 64 });
    const prompt = Int32Array.from([1, 403, 407, 261, 378]); // BOS + "Once upon a time" (stories260K vocab)
    const rates: number[] = [];
    const recordMs: number[] = []; // per step: time in eval(), i.e. recording on the host while the GPU idles
    let perStep = { dispatches: 0, submissions: 0, bytesRead: 0 };
    const t0 = performance.now();
    await model.eval(prompt, 0, 0, { logits: 'last' });
    let tok = await model.argmax();
    const prefillMs = performance.now() - t0;
    for (let run = 0; run < 3; run++) {
      const before = { ...ops.stats };
      const start = performance.now();
      let pos = prompt.length;
      for (let i = 0; i < nDecode; i++) {
        const r0 = performance.now();
        await model.eval(Int32Array.of(tok), pos++, 0, { logits: 'last' });
        recordMs.push(performance.now() - r0);
        tok = await model.argmax();
      }
      const ms = performance.now() - start;
      rates.push((nDecode * 1000) / ms);
      perStep = {
        dispatches: (ops.stats.dispatches - before.dispatches) / nDecode,
        submissions: (ops.stats.submissions - before.submissions) / nDecode,
        bytesRead: (ops.stats.bytesRead - before.bytesRead) / nDecode,
      };
    }
    rates.sort((a, b) => a - b);
    console.log(
      `${ops.description}\n  model ${path.split('/').pop()}  prefill ${prompt.length} tok ${prefillMs.toFixed(0)} ms (incl. pipeline builds)` +
        `\n  per decode step: ${perStep.dispatches} dispatches, ${perStep.submissions} submissions, ${perStep.bytesRead} bytes read back, ` +
        `recording ${median(recordMs).toFixed(2)} ms (median)` +
        `\n  decode: ${rates[1]!.toFixed(1)} tok/s (median of 3 × ${nDecode}; runs ${rates.map((r) => r.toFixed(1)).join(', ')})`,
    );
    model.destroy();
    await source.close?.();
  }
  return 0;
}
