/**
 * Benchmark of the WASM quantized matvecs (decode's dominant cost) at Qwen2.5-0.5B's real shapes — Q4_0 896×896,
 * 4864×896, 896×4864 and the tied Q8_0 output matrix 151936×896 (streamed from memory, 145 MB) — plus Q4_K, Q5_K and Q6_K
 * 2048×2048, per kernel build and for 1 and 2 threads, through `Ops.matmul` with one token (the Q8 activation is
 * cached across repeats, as in decode after the first matmul of a normed x), plus 32-token prefill cases in GMAC/s
 * (F16 among them: gemm_f16 at EmbeddingGemma-300M's FFN shapes, `--only=F16 --tokens=410`).
 * Each line gives the median and best wall time (GB/s of weight bytes) and the median process CPU time per matvec
 * (at 1 thread, GB/s per CPU-second is robust to other processes taking the core). Never gating.
 * With `--decode`, also times a simulated decode step of a Qwen2.5-0.5B-shaped Q4_0 model (Q8_0 tied output; weights
 * random, 128 cached positions or `--pos=N`) op by op, to show where a token's time goes.
 * Run: node --experimental-wasm-relaxed-simd scripts/run-ts.mjs test/bench/wasm-kernels.bench.ts [ms-per-case]
 *   [--decode [--steps=24] [--pos=128] [--baseline=DIR]] [--only=Q4_0,Q8_0] [--variant=relaxed-simd] [--threads=1] [--no-prefill]
 *   [--stream] [--prefill-only] [--tokens=32,4]
 * `--stream` cycles through copies of each matrix (≥ 256 MiB in all) so its weights come from memory, not cache:
 * the difference from the plain run is what streaming costs the kernel.
 * `--baseline=DIR` runs the decode simulation on the builds in DIR too (e.g. `git show HEAD:wasm/build/…` copies),
 * steps interleaved with the current build's, for a before/after under the same load.
 */

import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import type { Ops, Weight } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { GgmlType } from '../../src/gguf/types.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';

/** [type, rows, k]: Qwen2.5-0.5B's attention/FFN shapes, its whole Q8_0 output matrix, Llama-3.2-1B's FFN, K-quants. */
const CASES: [GgmlType, number, number][] = [
  [GgmlType.Q4_0, 896, 896],
  [GgmlType.Q4_0, 4864, 896],
  [GgmlType.Q4_0, 896, 4864],
  [GgmlType.Q8_0, 151936, 896],
  [GgmlType.Q8_0, 4864, 896],
  [GgmlType.Q4_0, 8192, 2048], // Llama-3.2-1B's gate/up and down: rows of 1152 and 4608 bytes
  [GgmlType.Q4_0, 2048, 8192],
  [GgmlType.Q4_K, 2048, 2048],
  [GgmlType.Q5_0, 4864, 896], // a Q4_K_M Qwen2.5-0.5B's gate/up (896 is not a multiple of 256: llama.cpp's fallback)
  [GgmlType.Q4_K, 896, 4864], // … and its down
  [GgmlType.Q6_K, 2048, 2048],
  [GgmlType.Q5_K, 2048, 2048], // a Q4_K_M Qwen3.5's fused attn_qkv type
  [GgmlType.Q4_K, 8192, 2048], // an LFM2-1.2B's ffn_gate / ffn_up
  [GgmlType.Q4_K, 2048, 8192], // an LFM2-1.2B's ffn_down (Q6_K in half the layers of a Q4_K_M mix)
  [GgmlType.Q6_K, 2048, 8192],
  [GgmlType.MXFP4, 1024, 1024], // gpt-oss-a0.2b's expert and attention shapes
  [GgmlType.MXFP4, 2048, 1024],
];

/** [type, rows, k] of the 32-token prefill cases. */
const PREFILL_CASES: [GgmlType, number, number][] = [
  [GgmlType.Q4_0, 4864, 896],
  [GgmlType.Q4_0, 896, 4864],
  [GgmlType.Q5_0, 4864, 896],
  [GgmlType.Q8_0, 4864, 896],
  [GgmlType.Q4_K, 2048, 2048],
  [GgmlType.Q6_K, 2048, 2048],
  [GgmlType.Q5_K, 2048, 2048], // a Q4_K_M Qwen3.5's attn_qkv type
  [GgmlType.MXFP4, 2048, 1024],
  [GgmlType.F16, 1152, 768], // EmbeddingGemma-300M's gate/up and down (gemm_f16's 3 × 3 tiles; e.g. --tokens=410)
  [GgmlType.F16, 768, 1152],
];

/** Block geometry, f16 scale offsets and E8M0 scale offsets of the benchmarked types. */
const BLOCKS: Partial<Record<GgmlType, { elements: number; bytes: number; f16At: number[]; e8m0At?: number }>> = {
  [GgmlType.Q4_0]: { elements: 32, bytes: 18, f16At: [0] },
  [GgmlType.Q8_0]: { elements: 32, bytes: 34, f16At: [0] },
  [GgmlType.Q5_0]: { elements: 32, bytes: 22, f16At: [0] },
  [GgmlType.Q4_K]: { elements: 256, bytes: 144, f16At: [0, 2] },
  [GgmlType.Q6_K]: { elements: 256, bytes: 210, f16At: [208] },
  [GgmlType.Q5_K]: { elements: 256, bytes: 176, f16At: [0, 2] },
  [GgmlType.MXFP4]: { elements: 32, bytes: 17, f16At: [], e8m0At: 0 },
  [GgmlType.F16]: { elements: 1, bytes: 2, f16At: [0] }, // every weight 0.01 (random bits would hold NaN/Inf)
};

/** Bytes of a [rows, k] matrix of `type`. */
function matrixBytes(type: GgmlType, rows: number, k: number): number {
  const g = BLOCKS[type]!;
  return (rows * k * g.bytes) / g.elements;
}

/** Random blocks of `type` with sane f16 scales (0.01) and E8M0 scales (2^−7). */
function randomBlocks(type: GgmlType, rows: number, k: number): Uint8Array {
  const g = BLOCKS[type]!;
  const bytes = new Uint8Array(matrixBytes(type, rows, k));
  let s = 12345;
  for (let i = 0; i < bytes.length; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    bytes[i] = s >>> 24;
  }
  for (let b = 0; b < bytes.length; b += g.bytes) {
    for (const at of g.f16At) {
      bytes[b + at] = 0x1f; // f16 0x211f ≈ 0.01
      bytes[b + at + 1] = 0x21;
    }
    if (g.e8m0At !== undefined) bytes[b + g.e8m0At] = 121;
  }
  return bytes;
}

/** Median and best wall seconds and median process CPU seconds of one matmul of `rows`×`k`. */
async function timeMatmul(
  ops: Ops,
  type: GgmlType,
  rows: number,
  k: number,
  budgetMs: number,
  n = 1,
  streamBytes = 0,
): Promise<{ median: number; best: number; cpu: number }> {
  // With streamBytes, enough copies of the matrix that cycling through them reads weights from memory, as decode does.
  const blocks = randomBlocks(type, rows, k);
  const copies = Math.max(1, Math.ceil(streamBytes / blocks.length));
  const ws: Weight[] = [];
  for (let c = 0; c < copies; c++)
    ws.push(await ops.uploadWeight({ name: `w${rows}x${k}#${c}`, type, shape: [k, rows] }, blocks));
  let next = 0;
  const w = (): Weight => ws[next++ % copies];
  const xTable = new Float32Array(k * n).map((_, i) => Math.sin(i));
  const table = await ops.uploadWeight(
    { name: `x${k}`, type: GgmlType.F32, shape: [k, n] },
    new Uint8Array(xTable.buffer),
  );
  const x = ops.createActivation('x', n, k);
  const out = ops.createActivation('out', n, rows);
  ops.beginStep({ tokens: Int32Array.from({ length: n }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(x, table, n);
  const samples: number[] = [];
  const cpu: number[] = [];
  const end = performance.now() + budgetMs;
  for (let i = 0; i < 5; i++) ops.matmul(out, x, w(), n); // warm-up
  while (performance.now() < end || samples.length < 5) {
    const reps = 10;
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) ops.matmul(out, x, w(), n);
    samples.push((performance.now() - t0) / reps / 1000);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / reps / 1e6);
  }
  ops.endStep();
  samples.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  return { median: samples[samples.length >> 1], best: samples[0], cpu: cpu[cpu.length >> 1] };
}

/** Qwen2.5-0.5B geometry. */
const QWEN = { dim: 896, nHeads: 14, nKvHeads: 2, headDim: 64, ffn: 4864, nLayers: 24, vocab: 151936, pos: 128 };

/** One simulated decode step (see the header); `t` times an op kind. */
type DecodeStep = (s: number, t: (kind: string, f: () => void) => void) => Promise<void>;

/** Uploads a Qwen2.5-0.5B-shaped model of random weights to `ops`; returns its decode step. */
async function setupDecode(ops: Ops, maxSteps: number, pos = QWEN.pos): Promise<DecodeStep> {
  const { dim, nHeads, nKvHeads, headDim, ffn, nLayers, vocab } = QWEN;
  const kvDim = nKvHeads * headDim;
  const q4 = randomBlocks(GgmlType.Q4_0, ffn, dim); // reused as the source of every Q4_0 matrix (each upload is its own copy)
  const up = (name: string, rows: number, k: number) =>
    ops.uploadWeight({ name, type: GgmlType.Q4_0, shape: [k, rows] }, q4.subarray(0, (rows * k * 18) / 32));
  const f32 = (name: string, n: number, v: number) =>
    ops.uploadWeight({ name, type: GgmlType.F32, shape: [n] }, new Uint8Array(new Float32Array(n).fill(v).buffer));
  const layers: Record<string, Weight>[] = [];
  for (let l = 0; l < nLayers; l++) {
    layers.push({
      attnNorm: await f32('an', dim, 1),
      ffnNorm: await f32('fn', dim, 1),
      q: await up('q', dim, dim),
      k: await up('k', kvDim, dim),
      v: await up('v', kvDim, dim),
      o: await up('o', dim, dim),
      qb: await f32('qb', dim, 0.01),
      kb: await f32('kb', kvDim, 0.01),
      vb: await f32('vb', kvDim, 0.01),
      gate: await up('gate', ffn, dim),
      upw: await up('up', ffn, dim),
      down: await up('down', dim, ffn),
    });
  }
  const output = await ops.uploadWeight(
    { name: 'output', type: GgmlType.Q8_0, shape: [dim, vocab] },
    randomBlocks(GgmlType.Q8_0, vocab, dim),
  );
  const norm = await f32('norm', dim, 1);
  const a = (label: string, cols: number) => ops.createActivation(label, 1, cols);
  const [x, xn, q, k, v, att, o, g, u, h, logits] = [
    a('x', dim),
    a('xn', dim),
    a('q', dim),
    a('k', kvDim),
    a('v', kvDim),
    a('att', dim),
    a('o', dim),
    a('g', ffn),
    a('u', ffn),
    a('h', ffn),
    a('logits', vocab),
  ];
  ops.createKvCache({
    nSlots: 1,
    contextLength: pos + maxSteps + 1,
    layers: uniformKvLayers(nLayers, nKvHeads, headDim),
  });
  const rope = { kind: 'neox' as const, headDim, nRot: headDim, theta: 1e6, freqScale: 1 };
  const attn = { nHeads, nKvHeads, headDim, scale: 1 / Math.sqrt(headDim), slidingWindow: 0, softcap: 0 };
  return async (s, t) => {
    ops.beginStep({ tokens: Int32Array.of(0), startPos: pos + s, slot: 0 });
    ops.embed(x, output, 1);
    for (const L of layers) {
      t('norm/add/glu', () => ops.rmsNorm(xn, x, L.attnNorm, 1e-6, 1));
      t('matmul attn', () => {
        ops.matmul(q, xn, L.q, 1, L.qb);
        ops.matmul(k, xn, L.k, 1, L.kb);
        ops.matmul(v, xn, L.v, 1, L.vb);
      });
      t('rope', () => {
        ops.rope(q, 1, rope);
        ops.rope(k, 1, rope);
      });
      t('attention', () => {
        ops.storeKv(layers.indexOf(L), k, v, 1);
        ops.attention(att, q, layers.indexOf(L), 1, attn);
      });
      t('matmul attn', () => ops.matmul(o, att, L.o, 1));
      t('norm/add/glu', () => {
        ops.add(x, x, o, 1);
        ops.rmsNorm(xn, x, L.ffnNorm, 1e-6, 1);
      });
      t('matmul ffn', () => {
        ops.matmul(g, xn, L.gate, 1);
        ops.matmul(u, xn, L.upw, 1);
      });
      t('norm/add/glu', () => ops.glu(h, g, u, 1, 'silu'));
      t('matmul ffn', () => ops.matmul(o, h, L.down, 1));
      t('norm/add/glu', () => ops.add(x, x, o, 1));
    }
    t('norm/add/glu', () => ops.rmsNorm(xn, x, norm, 1e-6, 1));
    t('matmul output (Q8_0)', () => ops.matmul(logits, xn, output, 1));
    ops.endStep();
    await ops.argmax(logits, 0);
  };
}

/**
 * Times `steps` simulated decode steps after `warmup` ones on each of `opsList` (steps interleaved across them, so a
 * baseline build and a new one see the same machine load); prints tok/s, tok per CPU-second and time per op kind.
 */
async function decodeSim(opsList: Ops[], labels: string[], warmup: number, steps: number, pos: number): Promise<void> {
  const runs = await Promise.all(
    opsList.map(async (ops) => ({
      step: await setupDecode(ops, warmup + steps, pos),
      times: new Map<string, number>(),
      wall: 0,
      cpu: 0,
    })),
  );
  for (let s = 0; s < warmup + steps; s++) {
    for (const run of runs) {
      const timed = s >= warmup;
      const t = (kind: string, f: () => void): void => {
        const t0 = performance.now();
        f();
        if (timed) run.times.set(kind, (run.times.get(kind) ?? 0) + performance.now() - t0);
      };
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      await run.step(s, t);
      if (timed) {
        run.wall += performance.now() - t0;
        const c = process.cpuUsage(c0);
        run.cpu += (c.user + c.system) / 1000;
      }
    }
  }
  runs.forEach((run, i) => {
    const parts = [...run.times].map(([kind, ms]) => `${kind} ${(ms / steps).toFixed(2)}`).join(', ');
    console.log(
      `${labels[i].padEnd(38)} decode ${(steps / (run.wall / 1000)).toFixed(2)} tok/s, ${(steps / (run.cpu / 1000)).toFixed(2)} tok/CPU-s ` +
        `(${(run.wall / steps).toFixed(1)} ms/token: ${parts} ms; load ${os.loadavg()[0].toFixed(2)})`,
    );
  });
}

/** Value of a `--name=a,b` option as a list (null when absent). */
function listOption(args: string[], name: string): string[] | null {
  const a = args.find((s) => s.startsWith(`--${name}=`));
  return a ? a.slice(name.length + 3).split(',') : null;
}

/** Prints one line per (variant, threads, shape): ms per matvec and GB/s of weight bytes (wall and CPU time). */
export async function main(args: string[] = []): Promise<number> {
  v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  const budgetMs = Number(args.find((a) => /^\d+$/.test(a)) ?? 400);
  const stream = args.includes('--stream');
  const f = detectWasmFeatures();
  const only = listOption(args, 'only');
  const threadList = (listOption(args, 'threads') ?? ['1', '2']).map(Number).filter((t) => t === 1 || f.threads);
  console.log(
    `features: simd128 ${f.simd128}, relaxed-simd ${f.relaxedSimd}, threads ${f.threads}; load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const allVariants: WasmVariant[] = ['scalar', 'simd128', ...(f.relaxedSimd ? (['relaxed-simd'] as const) : [])];
  const wanted = listOption(args, 'variant');
  const variants = wanted ? allVariants.filter((v) => wanted.includes(v)) : allVariants;
  const cases = CASES.filter(([type]) => !only || only.includes(GgmlType[type]));
  for (const variant of variants) {
    for (const threads of threadList) {
      const ops = await createWasmOps({ variant, threads });
      for (const [type, rows, k] of args.includes('--prefill-only') ? [] : cases) {
        if (variant === 'scalar' && rows * k > 1 << 26) continue; // the 145 MB output matrix would take seconds
        const { median, best, cpu } = await timeMatmul(ops, type, rows, k, budgetMs, 1, stream ? 256 * 2 ** 20 : 0);
        const bytes = matrixBytes(type, rows, k);
        console.log(
          `${ops.description.padEnd(28)} ${GgmlType[type]} ${String(rows).padStart(6)}×${String(k).padEnd(4)} ` +
            `median ${(median * 1e3).toFixed(3).padStart(7)} ms ${(bytes / median / 1e9).toFixed(2).padStart(6)} GB/s   ` +
            `best ${(best * 1e3).toFixed(3).padStart(7)} ms ${(bytes / best / 1e9).toFixed(2).padStart(6)} GB/s   ` +
            `CPU ${(cpu * 1e3).toFixed(3).padStart(7)} ms ${(bytes / cpu / 1e9).toFixed(2).padStart(6)} GB/CPU-s`,
        );
      }
      if (!args.includes('--no-prefill')) {
        // Prefill: 32 tokens through the multi-token tiles (multiply-adds per second), one shape per type.
        for (const [type, rows, k] of PREFILL_CASES) {
          if (only && !only.includes(GgmlType[type])) continue;
          for (const tokens of (listOption(args, 'tokens') ?? ['32']).map(Number)) {
            const p = await timeMatmul(ops, type, rows, k, budgetMs, tokens);
            const macs = rows * k * tokens;
            console.log(
              `${ops.description.padEnd(28)} ${GgmlType[type]} ${rows}×${k} ×${tokens} tokens  median ${(macs / p.median / 1e9).toFixed(1)} GMAC/s   best ${(macs / p.best / 1e9).toFixed(1)} GMAC/s   CPU ${(macs / p.cpu / 1e9).toFixed(1)} GMAC/CPU-s`,
            );
          }
        }
      }
      ops.destroy();
    }
  }
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  if (args.includes('--decode')) {
    const baseline = args.find((a) => a.startsWith('--baseline='))?.slice('--baseline='.length);
    const steps = Number(listOption(args, 'steps')?.[0] ?? 24);
    for (const threads of threadList) {
      const opsList = [await createWasmOps({ threads })];
      const labels = [opsList[0].description];
      if (baseline) {
        opsList.push(await createWasmOps({ threads, wasmBaseUrl: pathToFileURL(`${path.resolve(baseline)}/`) }));
        labels.push(`${opsList[1].description} (baseline)`);
      }
      await decodeSim(opsList, labels, 8, steps, Number(listOption(args, 'pos')?.[0] ?? QWEN.pos));
      for (const ops of opsList) ops.destroy();
    }
  }
  return 0;
}
