/**
 * WASM decode attention alone at a long context (issue 20): Qwen2.5-0.5B's geometry (14 heads, 2 KV heads × 64,
 * 24 layers), one query row at position `pos` over a KV cache (f32 unless KV_TYPE says f16, q8_0 or q4_0) filled
 * with real rows (untouched pages would all read the one zero page and always hit the cache), process CPU time per
 * token (all 24 layers) for the current kernel build and a baseline build (e.g. `git show <rev>:wasm/build/…`
 * copies), interleaved and in alternating order so both see the same machine load. Never gating.
 * Run: node --experimental-wasm-relaxed-simd scripts/run-ts.mjs test/bench/attention-long.bench.ts POS BASELINE_DIR [THREADS] [KV_TYPE] [BASELINE_KV_TYPE]
 * [KV_HEADS] (BASELINE_KV_TYPE: the baseline build runs over a cache of that type instead, e.g. current f16 vs f32
 * KV with BASELINE_DIR = wasm/build; KV_HEADS: 14 query heads over that many KV heads, default 2). Prints wall time too.
 * ROWS=n in the environment: n query rows ending at POS per layer (a prefill batch) instead of one.
 */

import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import type { KvType } from '../../src/backend/kv-type.js';
import { kvRowBytes } from '../../src/backend/kv-type.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';

const [N_HEADS, HEAD_DIM, N_LAYERS] = [14, 64, 24];
/** KV heads (Qwen2.5-0.5B: 2; the 6th argument, e.g. 1 for a multi-query geometry that splits positions across threads). */
let N_KV_HEADS = 2;

/**
 * `pos` rows of every layer's K then V as `kvType` bytes ([layers, K|V, pos, kvCols]): f32 values in ±0.5, f16 ones
 * of magnitude 0.25–0.5, or ggml blocks (f16 scale, then i8 values or nibbles) of pseudo-random bytes.
 */
function kvBytes(kvType: KvType, pos: number): Uint8Array {
  const kvCols = N_KV_HEADS * HEAD_DIM;
  const out = new Uint8Array(N_LAYERS * 2 * pos * kvRowBytes(kvType, kvCols));
  const hash = (i: number) => Math.imul(i, 2654435761) >>> 0;
  if (kvType === 'f32') {
    const f = new Float32Array(out.buffer);
    for (let i = 0; i < f.length; i++) f[i] = (hash(i) % 1000) / 1000 - 0.5;
  } else if (kvType === 'f16') {
    const h = new Uint16Array(out.buffer);
    for (let i = 0; i < h.length; i++) h[i] = (hash(i) & 0x83ff) | 0x3400;
  } else {
    const block = kvType === 'q8_0' ? 34 : 18;
    for (let i = 0; i < out.length; i++) out[i] = hash(i) >>> 24;
    for (let b = 0; b < out.length; b += block) {
      out[b] = 0;
      out[b + 1] = 0x1c; // f16 scale 2^-8
    }
  }
  return out;
}

/** One engine's decode attention over all layers at `pos`, as a function to time. */
async function setup(pos: number, threads: number, kvType: KvType, baseDir?: string): Promise<() => void> {
  const ops = await createWasmOps({
    threads,
    ...(baseDir ? { wasmBaseUrl: pathToFileURL(`${path.resolve(baseDir)}/`) } : {}),
  });
  ops.createKvCache({
    nSlots: 1,
    contextLength: pos + 8,
    layers: uniformKvLayers(N_LAYERS, N_KV_HEADS, HEAD_DIM),
    kvType,
  });
  await ops.writeKv?.(0, { elementType: kvType, nPositions: pos, data: kvBytes(kvType, pos) });
  const rows = Number(process.env.ROWS ?? 1); // query rows per call, the last at `pos`
  const q = ops.createActivation('q', rows, N_HEADS * HEAD_DIM);
  const out = ops.createActivation('out', rows, N_HEADS * HEAD_DIM);
  const params = {
    nHeads: N_HEADS,
    nKvHeads: N_KV_HEADS,
    headDim: HEAD_DIM,
    scale: 1 / 8,
    slidingWindow: 0,
    softcap: 0,
  };
  return () => {
    ops.beginStep({ tokens: new Int32Array(rows), startPos: pos - rows + 1, slot: 0 });
    for (let l = 0; l < N_LAYERS; l++) ops.attention(out, q, l, rows, params);
    ops.endStep();
  };
}

export async function main(args: string[]): Promise<number> {
  const pos = Number(args[0] ?? 4096);
  const threads = Number(args[2] ?? 1);
  const kvType = (args[3] ?? 'f32') as KvType;
  const baseKvType = (args[4] ?? kvType) as KvType;
  N_KV_HEADS = Number(args[5] ?? 2);
  const runs = [await setup(pos, threads, kvType), await setup(pos, threads, baseKvType, args[1])];
  const cpu = [0, 0];
  const wall = [0, 0];
  const rounds = 30;
  const warm = 5;
  for (let r = 0; r < rounds; r++) {
    for (const i of r % 2 === 0 ? [0, 1] : [1, 0]) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      runs[i]!();
      const c = process.cpuUsage(c0);
      if (r >= warm) {
        cpu[i]! += (c.user + c.system) / 1000 / (rounds - warm);
        wall[i]! += (performance.now() - t0) / (rounds - warm);
      }
    }
  }
  console.log(
    `decode attention at ${pos} positions, ${threads} thread(s), ${kvType} KV, ${N_KV_HEADS} KV heads: current ${cpu[0]!.toFixed(2)} ms CPU/token (wall ${wall[0]!.toFixed(2)}), ` +
      `baseline (${baseKvType} KV) ${cpu[1]!.toFixed(2)} (wall ${wall[1]!.toFixed(2)})`,
  );
  process.exit(0); // helper threads
}
