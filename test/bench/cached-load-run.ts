/**
 * One "cached load" measurement in its own process (clean peak RSS): `read` reads the model file sequentially in
 * 8 MiB pieces into one reused buffer (what the store alone costs), `ready` runs `createEngine` on it (header parse,
 * tokenizer, weights streamed onto the backend, warmup) until the engine resolves. Prints one JSON line.
 */

import v8 from 'node:v8';
import { NodeFileSource } from '../../src/io/node-file-source.js';

/** What to measure. */
export interface CachedLoadSpec {
  readonly modelPath: string;
  readonly mode: 'read' | 'ready';
  readonly backend: 'wasm' | 'webgpu';
  readonly threads: number;
}

/** One measurement. */
export interface CachedLoadRun {
  readonly mode: 'read' | 'ready';
  readonly backend: string;
  readonly ms: number;
  /** Process CPU time (all threads) during the measurement. */
  readonly cpuMs: number;
  readonly bytes: number;
  /** Resident memory before the measurement, and its peak growth above that (MiB). */
  readonly rssBeforeMiB: number;
  readonly rssGrowthMiB: number;
  /** `ready` only: the engine's own load (open → weights up) and warmup times. */
  readonly loadMs?: number;
  readonly warmupMs?: number;
}

const PIECE = 8 << 20;

/** Measures one spec in this process. */
export async function measureCachedLoad(spec: CachedLoadSpec): Promise<CachedLoadRun> {
  // Modules (and Dawn) are loaded before the clock and the RSS baseline start: they are not the load.
  const { createEngine } = await import('../../src/api/create-engine.js');
  // The backend's chunk too (createEngine imports it lazily): in the library build it is plain JS, here the Vite
  // module runner would transform it inside the measurement (~125 ms of TypeScript transforms, not the load).
  if (spec.mode === 'ready') {
    if (spec.backend === 'wasm') await import('../../src/backend/wasm/index.js');
    else await import('../../src/backend/webgpu/index.js');
  }
  const gpu =
    spec.mode === 'ready' && spec.backend === 'webgpu' ? await (await import('./node-gpu.js')).nodeGpu() : undefined;
  const rssBefore = process.memoryUsage().rss;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  let bytes = 0;
  let extra: { loadMs: number; warmupMs: number } | null = null;
  if (spec.mode === 'read') {
    const src = await NodeFileSource.open(spec.modelPath);
    const buf = new Uint8Array(PIECE);
    for (let at = 0; at < src.size; at += PIECE) {
      const n = Math.min(PIECE, src.size - at);
      await src.readInto(at, buf.subarray(0, n));
    }
    bytes = src.size;
    await src.close();
  } else {
    const engine = await createEngine({
      model: spec.modelPath,
      backend: spec.backend,
      threads: spec.threads,
      ...(gpu ? { gpu } : {}),
    });
    const stats = await engine.stats();
    extra = { loadMs: stats.loadMs, warmupMs: stats.warmupMs };
    bytes = (await import('node:fs')).statSync(spec.modelPath).size;
  }
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  const peak = process.resourceUsage().maxRSS * 1024;
  return {
    mode: spec.mode,
    backend: spec.backend,
    ms,
    cpuMs: (c.user + c.system) / 1000,
    bytes,
    rssBeforeMiB: rssBefore / 2 ** 20,
    rssGrowthMiB: Math.max(0, peak - rssBefore) / 2 ** 20,
    ...(extra ?? {}),
  };
}

/** Child-process entry: `cached-load-run.ts '<CachedLoadSpec JSON>'`; prints the result as the last stdout line. */
export async function main(args: string[]): Promise<number> {
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  const r = await measureCachedLoad(JSON.parse(args[0] ?? '{}') as CachedLoadSpec);
  process.stdout.write(`\n${JSON.stringify(r)}\n`);
  process.exit(0); // an engine holds worker threads; the figures are out
}
