/**
 * `npm run bench -- vision [--shape siglip-896|smolvlm-512|qwen25vl-896] [--layers N] [--rounds 1] [--threads 1]
 * [--backends wasm,webgpu] [--llama on|off] [--seed 1] [--profile]`: image encode time of webgguf's vision encoder
 * (`src/vision/vit-ops.ts`) against llama.cpp's mtmd on the CPU (scripts/oracle/mtmd-encode-time.c against libmtmd,
 * LLCPP_SRC default /work/cache/llcpp, its build/bin) on the same random-weight F16 mmproj and the same seed image,
 * preprocessed once: wall time and process CPU time per encode (at 1 thread the CPU time is robust to a shared
 * machine's load; WebGPU's lavapipe runs its own threads). Shapes:
 * - `siglip-896`: SigLIP-so400m as Gemma 3 ships it (896², patch 14 → 4096 patches, 1152 wide, 27 blocks of 16 heads,
 *   FFN 4304, 4×4 pooling → 256 tokens);
 * - `smolvlm-512`: SmolVLM-256M's ViT (512², patch 16 → 1024 patches, 768 wide, 12 blocks of 12 heads, FFN 3072),
 *   with the gemma3 pooling head in place of idefics3's pixel shuffle (the ViT is the cost);
 * - `qwen25vl-896`: Qwen2.5-VL's ViT (`qwen2.5vl_merger`: 896², patch 14 → 4096 patches, 1280 wide, 32 blocks of 16
 *   heads, SwiGLU FFN 3420, 112-px windows with full attention on every 8th block, 2×2 merger → 1024 tokens).
 * `--layers` cuts the depth (a block's cost is the same at every depth; the patch GEMM and the head are counted once).
 * `--profile`: the WASM run's CPU time by op. The text model is ../shared/models/arch/gemma3-f16.gguf (mtmd needs one;
 * 256 wide). Never gating.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, SHARED_MODELS } from '../../scripts/synthetic-model.js';
import { MMPROJ_GENERATORS, type MmprojShape } from '../../scripts/synthetic/mmproj-generators.js';
import { seedImage } from '../../scripts/synthetic/seed-image.mjs';
import type { Ops } from '../../src/backend/ops.js';
import { createBackend } from '../../src/backend/select-backend.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { preprocessImage } from '../../src/vision/preprocess-image.js';
import { readVisionConfig } from '../../src/vision/vision-config.js';
import { loadVitOps } from '../../src/vision/vit-ops.js';
import { nodeGpu } from './node-gpu.js';

/** Width of the text model mtmd loads next to the mmproj (../shared/models/arch/gemma3-f16.gguf). */
const TEXT_EMBD = 256;

/** A bench shape: the mmproj's projector (default gemma3) and its shape. */
type BenchShape = MmprojShape & { readonly projector?: string };

const SHAPES: Readonly<Record<string, BenchShape>> = {
  'siglip-896': {
    imageSize: 896,
    patchSize: 14,
    nEmbd: 1152,
    nHeads: 16,
    nFf: 4304,
    nLayers: 27,
    nEmbdText: TEXT_EMBD,
    merge: 4,
    matrices: 'f16',
  },
  'smolvlm-512': {
    imageSize: 512,
    patchSize: 16,
    nEmbd: 768,
    nHeads: 12,
    nFf: 3072,
    nLayers: 12,
    nEmbdText: TEXT_EMBD,
    merge: 4,
    matrices: 'f16',
  },
  'qwen25vl-896': {
    projector: 'qwen2.5vl_merger',
    imageSize: 896,
    patchSize: 14,
    nEmbd: 1280,
    nHeads: 16,
    nFf: 3420,
    nLayers: 32,
    nEmbdText: TEXT_EMBD,
    merge: 2,
    projHidden: 5120,
    windowPattern: 8,
    matrices: 'f16',
  },
};

interface VisionBenchResult {
  readonly runner: string;
  /** Encode time of each round, ms: wall clock, and CPU time of the process (load-robust at 1 thread). */
  readonly ms: readonly number[];
  readonly cpuMs: readonly number[];
  readonly bestMs: number;
  readonly bestCpuMs: number;
}

function flag(args: readonly string[], name: string, fallback: string): string {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1]! : fallback;
}

/**
 * `ops` whose calls add their process CPU time to `times` by op (matmuls by weight name, layer index folded): the
 * `--profile` breakdown. Meaningful on WASM, whose ops run when called (WebGPU's only record).
 */
function profiled(ops: Ops, times: Map<string, number>): Ops {
  return new Proxy(ops, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...a: unknown[]) => {
        const c0 = process.cpuUsage();
        const out = (v as (...args: unknown[]) => unknown).apply(target, a);
        const c = process.cpuUsage(c0);
        const w = prop === 'matmul' || prop === 'matmulResidual' ? (a[2] as { name: string }).name : '';
        const key = `${String(prop)}${w ? ` ${w.replace(/\.\d+\./, '.N.')}` : ''}`;
        times.set(key, (times.get(key) ?? 0) + (c.user + c.system) / 1000);
        return out;
      };
    },
  });
}

/** webgguf on `backend`: the encoder loaded once, then `rounds` encodes of the preprocessed image. */
async function runOurs(
  mmproj: Uint8Array,
  backend: 'wasm' | 'webgpu' | 'cpu',
  threads: number,
  rgb: ReturnType<typeof seedImage>,
  rounds: number,
  times: Map<string, number> | null,
): Promise<VisionBenchResult> {
  const backendOps = await createBackend(backend, {
    threads,
    ...(backend === 'webgpu' ? { gpu: await nodeGpu() } : {}),
  });
  const ops = times ? profiled(backendOps, times) : backendOps;
  const source = new MemoryByteSource(mmproj);
  const gguf = await parseGguf(source);
  const config = readVisionConfig(gguf.metadata);
  const vit = await loadVitOps(gguf, source, ops, config, TEXT_EMBD);
  const img = preprocessImage(rgb, config);
  const ms: number[] = [];
  const cpuMs: number[] = [];
  try {
    for (let r = 0; r < rounds; r++) {
      times?.clear(); // the last round's
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      await vit.encode(img);
      const c = process.cpuUsage(c0);
      ms.push(performance.now() - t0);
      cpuMs.push((c.user + c.system) / 1000);
    }
  } finally {
    vit.destroy();
  }
  return {
    runner: `webgguf ${ops.description}`,
    ms,
    cpuMs,
    bestMs: Math.min(...ms),
    bestCpuMs: Math.min(...cpuMs),
  };
}

/**
 * llama.cpp's mtmd CPU: scripts/oracle/mtmd-encode-time.c, compiled here against the CPU build of libmtmd (LLCPP_BIN
 * and LLCPP_SRC), encodes the image chunk `rounds` times in one process (no warmup, flash attention auto).
 */
function runLlamaCpp(
  mmprojPath: string,
  rgb: ReturnType<typeof seedImage>,
  dir: string,
  threads: number,
  rounds: number,
): VisionBenchResult | null {
  const src = process.env.LLCPP_SRC ?? '/work/cache/llcpp';
  const bin = process.env.LLCPP_BIN ?? path.join(src, 'build', 'bin');
  if (!existsSync(path.join(bin, 'libmtmd.so'))) {
    console.error(
      `llama.cpp: ${bin}/libmtmd.so is missing (build llama.cpp's mtmd; ../shared/docs/test-environment.md)`,
    );
    return null;
  }
  const exe = path.join(dir, 'mtmd-encode-time');
  const includes = ['include', 'ggml/include', 'tools/mtmd'].map((d) => `-I${path.join(src, d)}`);
  const libs = ['-lmtmd', '-lllama', '-lggml-base', '-lggml', `-Wl,-rpath,${bin}`];
  const oracle = path.join(REPO_ROOT, 'scripts', 'oracle', 'mtmd-encode-time.c');
  const cc = spawnSync(process.env.CC ?? 'cc', ['-O1', '-o', exe, oracle, ...includes, `-L${bin}`, ...libs], {
    stdio: 'inherit',
  });
  if (cc.status !== 0) return null;
  const rgbPath = path.join(dir, `vision-image-${rgb.width}.rgb`);
  writeFileSync(rgbPath, rgb.data);
  const model = path.join(SHARED_MODELS, 'arch', 'gemma3-f16.gguf');
  const args = [model, mmprojPath, rgbPath, `${rgb.width}`, `${rgb.height}`, `${threads}`, `${rounds}`];
  const run = spawnSync(exe, args, { encoding: 'utf8', maxBuffer: 1 << 24, stdio: ['ignore', 'pipe', 'pipe'] });
  if (run.status !== 0) {
    console.error(`mtmd-encode-time failed (exit ${run.status}):\n${run.stderr.slice(-2000)}`);
    return null;
  }
  const out = JSON.parse(run.stdout) as { rounds: { wall_ms: number; cpu_ms: number }[] };
  const ms = out.rounds.map((r) => r.wall_ms);
  const cpuMs = out.rounds.map((r) => r.cpu_ms);
  return {
    runner: `llama.cpp mtmd cpu, ${threads} thread(s)`,
    ms,
    cpuMs,
    bestMs: Math.min(...ms),
    bestCpuMs: Math.min(...cpuMs),
  };
}

/** Entry of `npm run bench -- vision …`; returns the exit status. */
export async function runVisionBench(args: readonly string[]): Promise<number> {
  const shapeName = flag(args, '--shape', 'siglip-896');
  const base = SHAPES[shapeName];
  if (!base) {
    console.error(`--shape ${shapeName}: one of ${Object.keys(SHAPES).join(', ')}`);
    return 2;
  }
  const shape = { ...base, nLayers: Number(flag(args, '--layers', String(base.nLayers))) };
  const rounds = Number(flag(args, '--rounds', '1'));
  const threads = Number(flag(args, '--threads', '1'));
  const seed = Number(flag(args, '--seed', '1'));
  const backends = flag(args, '--backends', 'wasm').split(',') as ('wasm' | 'webgpu' | 'cpu')[];
  const dir = path.join(REPO_ROOT, '.cache', 'bench');
  mkdirSync(dir, { recursive: true });
  const mmprojPath = path.join(dir, `vision-${shapeName}-l${shape.nLayers}-s${seed}.mmproj.gguf`);
  if (!existsSync(mmprojPath)) writeFileSync(mmprojPath, MMPROJ_GENERATORS[shape.projector ?? 'gemma3']!(seed, shape));
  const mmproj = new Uint8Array(readFileSync(mmprojPath));
  const rgb = seedImage(shape.imageSize, shape.imageSize, seed);
  const results: VisionBenchResult[] = [];
  const llama = flag(args, '--llama', 'on') === 'on' ? runLlamaCpp(mmprojPath, rgb, dir, threads, rounds) : null;
  if (llama) results.push(llama);
  const profile = args.includes('--profile') ? new Map<string, number>() : null;
  for (const b of backends) {
    results.push(await runOurs(mmproj, b, threads, rgb, rounds, b === 'wasm' ? profile : null));
  }
  const patches = (shape.imageSize / shape.patchSize) ** 2;
  console.log(
    `vision encode: ${shapeName} (${patches} patches, ${shape.nEmbd} wide, ${shape.nLayers} blocks, F16), ` +
      `${threads} thread(s), ${rounds} round(s); best round`,
  );
  for (const r of results) {
    const ratio = llama
      ? `  ${(llama.bestMs / r.bestMs).toFixed(2)}× wall, ${(llama.bestCpuMs / r.bestCpuMs).toFixed(2)}× CPU`
      : '';
    console.log(
      `${r.runner.slice(0, 60).padEnd(60)} ${(r.bestMs / 1000).toFixed(2).padStart(7)} s wall ` +
        `${(r.bestCpuMs / 1000).toFixed(2).padStart(7)} CPU-s${ratio}`,
    );
  }
  const wasm = results.find((r) => r.runner.startsWith('webgguf wasm'));
  if (profile && wasm) {
    // What the encode spent outside the backend's ops: preprocessing rows, host-side reorders, rope tables, reads.
    const inOps = [...profile.values()].reduce((a, b) => a + b, 0);
    profile.set('(host: outside every op)', wasm.cpuMs[wasm.cpuMs.length - 1]! - inOps);
    console.log('wasm, last round, CPU ms by op:');
    for (const [op, ms] of [...profile].sort((a, b) => b[1] - a[1])) console.log(`  ${op.padEnd(48)} ${ms.toFixed(0)}`);
  }
  console.log(JSON.stringify({ kind: 'vision', shape: shapeName, ...shape, threads, rounds, results }));
  return 0;
}
