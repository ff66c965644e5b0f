/**
 * GPU-timer check for a machine with a real GPU (the `device` machine, when lent), also runnable here on lavapipe:
 * the adapter's features, then stories260K greedy decode with the GPU timer off and on (same tokens, one submission
 * per step, every dispatch timed, GPU ms per op kind), then `measureOurs` on each model path given (decode tok/s and
 * the GPU-time breakdown). Prints one JSON object as the last stdout line. Usage:
 * `node scripts/run-ts.mjs test/bench/device-gpu-check.ts STORIES260K.gguf [MODEL.gguf …]`.
 */

import { requestGpuContext } from '../../src/backend/webgpu/device.js';
import { createGpuTimer } from './gpu-timer.js';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { greedySteps } from '../helpers/greedy-steps.js';
import { round, type RunResult } from './bench-types.js';
import { nodeGpu } from './node-gpu.js';
import { gpuBreakdownPerToken, profileOps } from './op-profiler.js';
import { measureOurs } from './run-ours.js';

/** What the stories260K part found. */
interface TimerCheck {
  readonly adapter: string;
  readonly features: readonly string[];
  readonly tokensEqual: boolean;
  readonly submissionsPerStep: readonly number[];
  readonly dispatchesPerStep: number;
  readonly timedPassesPerStep: number;
  readonly stepMsTimerOff: number;
  readonly stepMsTimerOn: number;
  readonly gpuMsPerToken: Readonly<Record<string, number>>;
}

/** stories260K: greedy steps with the timer off, then on, on one device. */
async function checkTimer(gpu: GPU, modelPath: string, steps: number): Promise<TimerCheck> {
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new Error('no WebGPU adapter');
  const info = adapter.info;
  const ctx = await requestGpuContext({ adapter });
  const timer = createGpuTimer(ctx.device);
  const ops = await createWebGpuOps({ adapter, device: timer?.device ?? ctx.device });
  const { ops: wrapped, profile } = profileOps(ops, timer);
  const source = await NodeFileSource.open(modelPath);
  const model = await loadTransformer(await parseGguf(source), source, wrapped, { contextLength: 256 });
  try {
    const prompt = Int32Array.of(1, 403, 407, 261, 378);
    const run = async (
      timed: boolean,
    ): Promise<{ tokens: number[]; subs: number[]; ms: number; dispatches: number }> => {
      await model.eval(prompt, 0, 0);
      const first = await model.argmax();
      const d0 = ops.stats.dispatches;
      profile.enabled = timed;
      if (timer) timer.enabled = timed;
      const t0 = performance.now();
      const r = await greedySteps(model, ops.stats, first, prompt.length, steps);
      const ms = performance.now() - t0;
      profile.enabled = false;
      if (timer) timer.enabled = false;
      return { tokens: [first, ...r.tokens], subs: r.submissionsPerStep, ms, dispatches: ops.stats.dispatches - d0 };
    };
    await run(false); // warm-up: pipelines
    const off = await run(false);
    timer?.reset();
    const on = await run(true);
    const t = timer ? await timer.collect() : null;
    return {
      adapter: [info.vendor, info.architecture, info.device, info.description].filter((s) => s).join(' | '),
      features: [...ctx.device.features].sort(),
      tokensEqual: JSON.stringify(off.tokens) === JSON.stringify(on.tokens),
      submissionsPerStep: [...off.subs, ...on.subs],
      dispatchesPerStep: round(off.dispatches / steps, 1),
      timedPassesPerStep: t ? round(t.passes / steps, 1) : 0,
      stepMsTimerOff: round(off.ms / steps, 3),
      stepMsTimerOn: round(on.ms / steps, 3),
      gpuMsPerToken: t ? gpuBreakdownPerToken(t.byKind, t.spanMs, steps, on.ms) : {},
    };
  } finally {
    model.destroy();
    timer?.destroy();
    ctx.device.destroy();
    await source.close();
  }
}

/** Entry: `device-gpu-check.ts STORIES260K.gguf [MODEL.gguf …]`; returns 0 when the timer check passed. */
export async function main(args: string[]): Promise<number> {
  const [stories, ...models] = args;
  if (!stories) {
    console.error('usage: device-gpu-check.ts STORIES260K.gguf [MODEL.gguf …]');
    return 2;
  }
  const gpu = await nodeGpu();
  const timerCheck = await checkTimer(gpu, stories, 16);
  console.log(`timer check: ${JSON.stringify(timerCheck)}`);
  const runs: RunResult[] = [];
  const errors: string[] = [];
  for (const modelPath of models) {
    try {
      const workload = { promptLengths: [128, 512], decodeTokens: 128, seed: 1, tokenRange: [100, 30000] as const };
      const r = await measureOurs({ modelPath, backend: 'webgpu', threads: 1, workload, profileSteps: 8 });
      console.log(
        `${modelPath}: prefill ${JSON.stringify(r.prefillTokPerS)} tok/s, decode ${r.decodeTokPerS} tok/s; ${r.breakdownSource}: ${JSON.stringify(r.breakdownMs)}`,
      );
      runs.push(r);
    } catch (e) {
      errors.push(`${modelPath}: ${(e as Error).message}`);
      console.log(`${modelPath}: failed: ${(e as Error).message}`);
    }
  }
  process.stdout.write(`\n${JSON.stringify({ timerCheck, runs, errors })}\n`);
  const ok = timerCheck.tokensEqual && timerCheck.submissionsPerStep.every((s) => s === 1);
  return ok ? 0 : 1;
}
