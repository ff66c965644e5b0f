/**
 * Command-line options of `npm run bench` and their parsing. Bad values are LlmError('invalid-request') naming the
 * option, the value and what is accepted.
 */

import path from 'node:path';
import { KV_TYPES, type KvType } from '../../src/backend/kv-type.js';
import { LlmError } from '../../src/errors.js';
import { REPO_ROOT } from '../../scripts/synthetic-model.js';

/** Parsed options. */
export interface BenchArgs {
  readonly help: boolean;
  readonly shape: (typeof SHAPES)[number];
  readonly quant: string;
  /** A GGUF to use instead of a synthetic model. */
  readonly model: string | undefined;
  readonly threads: readonly number[];
  /** KV cache types our backends run with, each a case of every round (empty: the backend's default). */
  readonly kvTypes: readonly KvType[];
  readonly rounds: number;
  readonly prompts: readonly number[];
  readonly decode: number;
  readonly seed: number;
  /** Our backends: 'wasm' (default), 'webgpu', 'cpu'. */
  readonly backends: readonly string[];
  /** Peers: 'llama.cpp' (default), 'vulkan' (llama.cpp's Vulkan build; ~4 min of shader compiles on first use). */
  readonly peers: readonly string[];
  /** Also run wllama and our WASM/WebGPU in headless Chromium. */
  readonly browser: boolean;
  /** Also our WebGPU path in Chromium (SwiftShader here). */
  readonly browserWebgpu: boolean;
  /** The Chromium/IndexedDB cached-load section even without the rest of the browser cases. */
  readonly browserCachedLoad: boolean;
  /** The batched-choices ratio in Chromium even without the rest of the browser cases. */
  readonly browserChoices: boolean;
  /** Re-render the Markdown and SVG of an existing JSON report instead of running. */
  readonly render: string | undefined;
  readonly bandwidth: boolean;
  /** The cached-load section (file read vs engine ready; --no-cached-load skips it). */
  readonly cachedLoad: boolean;
  /** The persisted prompt-cache section (TTFT after a reload ÷ cold; --no-prompt-cache skips it). */
  readonly promptCache: boolean;
  /** GPU memory bandwidth, GB/s (for the GPU rows' roofline). */
  readonly gpuBw: number | null;
  readonly bandwidthBytes: number;
  readonly profileSteps: number;
  /** Re-run the first prompt op by op for a prefill breakdown (default true; --no-profile-prefill). */
  readonly profilePrefill: boolean;
  /** WebGPU: breakdown from encode time even where the adapter has timestamp queries (--no-gpu-timestamps). */
  readonly gpuTimestamps: boolean;
  /** WebGPU kernel set (--kernels auto|hardware|software|hardware-nosubgroups; default auto). */
  readonly kernels: 'auto' | 'hardware' | 'software' | 'hardware-nosubgroups';
  readonly caseTimeoutS: number;
  readonly outDir: string;
  readonly raw: readonly string[];
}

export const USAGE = `npm run bench -- [options]
  --shape qwen2.5-0.5b|llama-3.2-1b|tiny|lfm2-1.2b|qwen3.5-0.8b|qwen3moe-a0.2b|dense-a0.2b|gpt-oss-a0.2b
                                           synthetic model shape (default qwen2.5-0.5b; cached in ~/.cache/webgguf;
                                           qwen3moe-a0.2b: 64 experts top-8, 1.03 B total / 0.15 B active;
                                           dense-a0.2b: a dense model of the same active bytes;
                                           gpt-oss-a0.2b: 32 experts top-4, MXFP4 with --quant mxfp4)
  --quant q4_0|q4_k|q4_k_m|q8_0|…          its quant (default q4_0; q4_k_m: llama.cpp's Q4_K_M mix)
  --model FILE.gguf                        use this file instead
  --threads 1,2                            thread counts (default 1,2)
  --kv-type f16,q8_0                       our backends' KV cache types, each run in every round (default: the
                                           backend's own); a report with several adds their ratios
  --rounds N                               interleaved rounds per case (default 3; medians reported)
  --prompts 128,512                        prefill prompt lengths (default 128,512)
  --decode N                               decoded tokens (default 128)
  --backends wasm[,webgpu,cpu]|none        our backends in Node (default wasm)
  --peers llama.cpp[,vulkan,cuda]|none     peers in Node (default llama.cpp; vulkan: ~4 min of shader compiles on lavapipe)
  --gpu-bw GBPS                            GPU memory bandwidth, for the GPU rows' roofline
  --kernels auto|hardware|software|hardware-nosubgroups
                                           WebGPU kernel set (hardware: the GPU kernels, also on lavapipe;
                                           hardware-nosubgroups: those of a GPU without subgroups)
  --browser                                also wllama + our WASM in headless Chromium
  --browser-webgpu                         … and our WebGPU there (SwiftShader: slow)
  --browser-cached-load                    the cached-load section from IndexedDB in Chromium (each step in a fresh
                                           page) without the other browser cases; --browser runs it too
  --browser-choices                        the batched-choices ratio (n = 4 ÷ n = 1, WASM ×1) in Chromium without the
                                           other browser cases; --browser runs it too (needs --backends with wasm)
  --render FILE.json                       only re-render FILE.md / FILE.svg from a JSON report
  --no-bandwidth                           skip the WASM bandwidth probe
  --no-cached-load                         skip the cached-load section (read the file vs createEngine ready)
  --no-prompt-cache                        skip the persisted prompt-cache section (1,000-token system prompt: TTFT
                                           after a reload ÷ cold, WASM)
  --profile-steps N                        decode steps timed op by op (default 8; 0: no breakdown). WebGPU: GPU time
                                           from timestamp queries where the adapter offers them, else encode time
  --no-profile-prefill                     skip the op-by-op re-run of the first prompt (saves a prefill)
  --no-gpu-timestamps                      WebGPU breakdown from encode time even where timestamps are offered
  --quick                                  prompts 32, decode 16, 1 round (a smoke run)
  --out DIR                                results folder (default .cache/bench)
  --timeout S                              per-case limit in seconds (default 900)`;

const SHAPES = [
  'qwen2.5-0.5b',
  'llama-3.2-1b',
  'tiny',
  'lfm2-1.2b',
  'qwen3.5-0.8b',
  'qwen3moe-a0.2b',
  'dense-a0.2b',
  'gpt-oss-a0.2b',
] as const;

function bad(option: string, value: string, what: string): never {
  throw new LlmError('invalid-request', `bench options: ${option} got "${value}"; expected ${what}`, {
    details: { option, value },
  });
}

function intList(option: string, v: string): number[] {
  const xs = v.split(',').map(Number);
  if (!xs.length || xs.some((x) => !Number.isInteger(x) || x < 1)) bad(option, v, 'comma-separated positive integers');
  return xs;
}

function int(option: string, v: string): number {
  const x = Number(v);
  if (!Number.isInteger(x) || x < 1) bad(option, v, 'a positive integer');
  return x;
}

/** Parses argv (after `--`). */
export function parseBenchArgs(argv: readonly string[]): BenchArgs {
  const o: { -readonly [K in keyof BenchArgs]: BenchArgs[K] } = {
    help: false,
    shape: 'qwen2.5-0.5b',
    quant: 'q4_0',
    model: undefined,
    threads: [1, 2],
    kvTypes: [],
    rounds: 3,
    prompts: [128, 512],
    decode: 128,
    seed: 1,
    backends: ['wasm'],
    peers: ['llama.cpp'],
    browser: false,
    browserWebgpu: false,
    browserCachedLoad: false,
    browserChoices: false,
    render: undefined,
    bandwidth: true,
    cachedLoad: true,
    promptCache: true,
    gpuBw: null,
    bandwidthBytes: 256 * 2 ** 20,
    profileSteps: 8,
    profilePrefill: true,
    gpuTimestamps: true,
    kernels: 'auto',
    caseTimeoutS: 900,
    outDir: path.join(REPO_ROOT, '.cache', 'bench'),
    raw: [...argv],
  };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = (): string => {
      const x = argv[++i];
      if (x === undefined) bad(k, '', 'a value after it');
      return x;
    };
    switch (k) {
      case '-h':
      case '--help':
        o.help = true;
        break;
      case '--shape': {
        const s = v();
        if (!(SHAPES as readonly string[]).includes(s)) bad(k, s, SHAPES.join(' | '));
        o.shape = s as BenchArgs['shape'];
        break;
      }
      case '--quant':
        o.quant = v();
        break;
      case '--model':
        o.model = path.resolve(v());
        break;
      case '--threads':
        o.threads = intList(k, v());
        break;
      case '--kv-type': {
        const s = v();
        const xs = s.split(',');
        if (xs.some((x) => !(KV_TYPES as readonly string[]).includes(x)))
          bad(k, s, `comma-separated ${KV_TYPES.join(' | ')}`);
        o.kvTypes = xs as KvType[];
        break;
      }
      case '--rounds':
        o.rounds = int(k, v());
        break;
      case '--prompts':
        o.prompts = intList(k, v());
        break;
      case '--decode':
        o.decode = int(k, v());
        break;
      case '--seed':
        o.seed = int(k, v());
        break;
      case '--backends': {
        const s = v();
        const xs = s === 'none' ? [] : s.split(',');
        if (xs.some((x) => !['wasm', 'webgpu', 'cpu'].includes(x))) bad(k, s, 'wasm, webgpu and/or cpu, or none');
        o.backends = xs;
        break;
      }
      case '--peers': {
        const s = v();
        const xs = s === 'none' ? [] : s.split(',');
        if (xs.some((x) => !['llama.cpp', 'vulkan', 'cuda'].includes(x)))
          bad(k, s, 'llama.cpp, vulkan and/or cuda, or none');
        o.peers = xs;
        break;
      }
      case '--browser':
        o.browser = true;
        break;
      case '--browser-webgpu':
        o.browser = true;
        o.browserWebgpu = true;
        break;
      case '--browser-cached-load':
        o.browserCachedLoad = true;
        break;
      case '--browser-choices':
        o.browserChoices = true;
        break;
      case '--render':
        o.render = path.resolve(v());
        break;
      case '--no-cached-load':
        o.cachedLoad = false;
        break;
      case '--no-prompt-cache':
        o.promptCache = false;
        break;
      case '--no-bandwidth':
        o.bandwidth = false;
        break;
      case '--gpu-bw':
        o.gpuBw = int(k, v());
        break;
      case '--bandwidth-mib':
        o.bandwidthBytes = int(k, v()) * 2 ** 20;
        break;
      case '--profile-steps': {
        const s = v();
        const x = Number(s);
        if (!Number.isInteger(x) || x < 0) bad(k, s, 'a whole number ≥ 0');
        o.profileSteps = x;
        break;
      }
      case '--no-profile-prefill':
        o.profilePrefill = false;
        break;
      case '--no-gpu-timestamps':
        o.gpuTimestamps = false;
        break;
      case '--kernels': {
        const s = v();
        if (!['auto', 'hardware', 'software', 'hardware-nosubgroups'].includes(s))
          bad(k, s, 'auto | hardware | software | hardware-nosubgroups');
        o.kernels = s as BenchArgs['kernels'];
        break;
      }
      case '--quick':
        o.prompts = [32];
        o.decode = 16;
        o.rounds = 1;
        break;
      case '--out':
        o.outDir = path.resolve(v());
        break;
      case '--timeout':
        o.caseTimeoutS = int(k, v());
        break;
      default:
        bad('argument', k, 'one of the options in the usage');
    }
  }
  return o;
}
