/**
 * Host cost of recording one WebGPU decode step (not gating; counts and CPU time, no GPU speed): per step, the CPU
 * time from `eval` to the submitted argmax (everything the host does while the GPU waits; median and minimum over
 * `steps` greedy decode steps of one model) and the JS heap bytes allocated per step, from V8's sampling heap
 * profiler (one sample per 512 bytes, collected objects included; `heapUsed` deltas are dominated by V8's own bookkeeping),
 * apart from what the event loop allocates while a read is awaited (Dawn's polling), with the top allocation sites.
 * With `pipelined` each step is recorded the way pipelined greedy decode does it (the token stays on the device:
 * `evalChained` + `argmaxToInput`, step N+1 submitted before token N is read back).
 * Usage: node scripts/run-ts.mjs test/bench/step-record.bench.ts [model.gguf|qwen2.5-0.5b|llama-3.2-1b]
 *   [steps=32] [auto|hardware|software] [pipelined]
 */

import { Session } from 'node:inspector/promises';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { makeSyntheticModel } from '../../scripts/synthetic-model.js';
import { nodeGpu } from './node-gpu.js';

/** Frames whose subtrees are the event loop waiting for the GPU (Dawn's polling), not the recording. */
const WAIT_FRAMES = new Set(['processImmediate', 'setImmediate', '(V8 API)', 'post']);

function median(v: readonly number[]): number {
  const s = [...v].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

/** Runs the benchmark; returns the process exit status. */
export async function main(args: string[]): Promise<number> {
  const which = args[0] ?? 'qwen2.5-0.5b';
  const path = which.endsWith('.gguf')
    ? which
    : await makeSyntheticModel({ shape: which as 'qwen2.5-0.5b' | 'llama-3.2-1b', quant: 'q4_0' });
  const steps = Number(args[1] ?? 32);
  const kernels = (args[2] ?? 'hardware') as 'auto' | 'hardware' | 'software';
  const source = await NodeFileSource.open(path);
  const gguf = await parseGguf(source);
  const ops = await createWebGpuOps({ gpu: await nodeGpu(), kernels });
  const model = await loadTransformer(gguf, source, ops, { contextLength: 256, ubatchSize: 32 });
  await model.eval(Int32Array.of(1, 2, 3, 4), 0, 0, { logits: 'last' });
  let tok = await model.argmax();
  const tokenIds = new Int32Array(1); // [1] the step's token
  let pos = 4;
  const pipelined = args[3] === 'pipelined';
  let pending = pipelined ? model.argmaxToInput() : Promise.resolve(tok); // pipelined: the token left on the device
  const step = async (): Promise<number> => {
    const t0 = performance.now();
    if (pipelined) {
      await model.evalChained(pos++, 0); // embed reads the token the last argmax wrote on the device
      const next = model.argmaxToInput(); // submits this step before the previous token is read back
      const us = (performance.now() - t0) * 1000;
      tok = await pending;
      pending = next;
      return us;
    }
    tokenIds[0] = tok;
    await model.eval(tokenIds, pos++, 0, { logits: 'last' }); // recording is synchronous: no GPU wait here
    const next = model.argmax(); // records argmax and the readback copy, and submits
    const us = (performance.now() - t0) * 1000;
    tok = await next;
    return us;
  };
  for (let i = 0; i < 2; i++) await step(); // the first steps build pipelines and bind groups
  const cpuUs: number[] = [];
  const before = { ...ops.stats };
  for (let i = 0; i < steps; i++) cpuUs.push(await step());
  const dispatches = (ops.stats.dispatches - before.dispatches) / steps;
  const submissions = (ops.stats.submissions - before.submissions) / steps;
  const tokenWrites = (ops.stats.tokenWrites - before.tokenWrites) / steps;
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 512,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  for (let i = 0; i < steps; i++) await step();
  const { profile } = await session.post('HeapProfiler.stopSampling');
  session.disconnect();
  // Allocations under the event loop's immediates and V8 API callbacks are Dawn's polling while a read is awaited
  // (megabytes per step, whatever is recorded); the rest is the host's recording.
  const sites = new Map<string, number>();
  let waiting = 0;
  const walk = (node: typeof profile.head, inWait: boolean): void => {
    const f = node.callFrame;
    const wait = inWait || WAIT_FRAMES.has(f.functionName);
    if (wait) waiting += node.selfSize;
    else {
      const site = `${f.functionName || '(anonymous)'} ${f.url.split('/').pop()}:${f.lineNumber + 1}`;
      sites.set(site, (sites.get(site) ?? 0) + node.selfSize);
    }
    for (const child of node.children) walk(child, wait);
  };
  walk(profile.head, false);
  const total = [...sites.values()].reduce((a, b) => a + b, 0);
  const top = [...sites.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8);
  console.log(
    `${ops.description} (${ops.kernelSet} kernels), ${path.split('/').pop()}\n` +
      `  per decode step${pipelined ? ' (pipelined)' : ''}: ${dispatches} dispatches, ${submissions} submissions, ` +
      `${tokenWrites} host token writes\n` +
      `  host recording (eval → submitted argmax): ${median(cpuUs).toFixed(0)} µs median, ${Math.min(...cpuUs).toFixed(0)} µs min\n` +
      `  JS heap allocated per step by the host's recording: ${(total / steps).toFixed(0)} B (while waiting for the ` +
      `GPU: ${(waiting / steps).toFixed(0)} B); top sites (B/step): ` +
      top.map(([site, b]) => `${site} ${(b / steps).toFixed(0)}`).join(', '),
  );
  await pending;
  model.destroy();
  await source.close?.();
  return 0;
}
