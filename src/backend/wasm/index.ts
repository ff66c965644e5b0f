/**
 * The WASM-SIMD CPU backend: `createWasmOps()` picks the best kernel build this engine validates (relaxed-simd,
 * simd128 or scalar), places everything in one WebAssembly.Memory, and — when shared memory and workers are
 * available — splits matmul rows across helper threads.
 */

import { LlmError } from '../../errors.js';
import type { Ops } from '../ops.js';
import type { KernelExports } from './kernel-exports.js';
import {
  bestVariant,
  detectWasmFeatures,
  IS_NODE,
  isVariantSupported,
  loadKernelModule,
  type WasmVariant,
} from './loader.js';
import { ThreadPool } from './thread-pool.js';
import { WASM32_MAX_PAGES, WasmHeap } from './wasm-heap.js';
import { WasmOps } from './wasm-ops.js';
import { wasmRecurrentKernels } from './recurrent-kernels.js';

export type { WasmVariant } from './loader.js';
export { detectWasmFeatures } from './loader.js';

/** Options of `createWasmOps`. */
export interface WasmOpsOptions {
  /**
   * Threads running each matmul, the calling one included. Default: the machine's logical cores (at most 8) when
   * threads are possible, else 1. Falls back to 1 without shared memory / workers (or, in a browser, without
   * `crossOriginIsolated`).
   */
  threads?: number;
  /** Force a kernel build; default: the best one `WebAssembly.validate` accepts. */
  variant?: WasmVariant;
  /** Folder serving wasm/build/*.wasm, when not next to the bundled library. */
  wasmBaseUrl?: string | URL;
}

async function defaultThreads(): Promise<number> {
  let n = 1;
  if (IS_NODE) {
    const os = await import('node:os');
    n = typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
  } else if (typeof navigator !== 'undefined' && navigator.hardwareConcurrency) {
    n = navigator.hardwareConcurrency;
  }
  return Math.max(1, Math.min(8, n));
}

/** A shared memory with the largest maximum this engine will reserve (wasm32 allows 4 GiB; some browsers less). */
function createSharedHeap(): WasmHeap {
  let lastError: unknown;
  for (const pages of [WASM32_MAX_PAGES, 32768, 16384]) {
    try {
      return new WasmHeap(true, pages);
    } catch (e) {
      lastError = e;
    }
  }
  throw lastError;
}

/**
 * Creates the WASM backend.
 * @throws LlmError('feature-missing') when a forced `variant` is not supported here or the kernels cannot load.
 */
export async function createWasmOps(options: WasmOpsOptions = {}): Promise<Ops> {
  const features = detectWasmFeatures();
  const variant = options.variant ?? bestVariant(features);
  if (!isVariantSupported(variant, features)) {
    throw new LlmError(
      'feature-missing',
      `the WASM ${variant} kernels cannot run on this engine (simd128: ${features.simd128}, relaxed-simd: ${features.relaxedSimd}, ` +
        `relaxed dot-add: ${features.dotAdd}). ` +
        (variant === 'relaxed-simd' ? 'Node 20 needs --experimental-wasm-relaxed-simd; or ' : '') +
        (variant === 'relaxed-dot' ? 'Node 20 computes i32x4.relaxed_dot_i8x16_i7x16_add_s wrongly; ' : '') +
        'omit `variant` to pick the best supported build.',
      { details: { variant, simd128: features.simd128, relaxedSimd: features.relaxedSimd, dotAdd: features.dotAdd } },
    );
  }
  const requested = options.threads ?? (await defaultThreads());
  if (!Number.isInteger(requested) || requested < 1) {
    throw new LlmError('invalid-request', `createWasmOps: threads must be a positive integer, got ${requested}`, {
      details: { threads: requested },
    });
  }
  let threads = features.threads ? requested : 1;
  let heap: WasmHeap;
  if (threads > 1) {
    try {
      heap = createSharedHeap();
    } catch {
      threads = 1;
      heap = new WasmHeap(false);
    }
  } else {
    heap = new WasmHeap(false);
  }
  const module = await loadKernelModule(variant, heap.isShared, options.wasmBaseUrl);
  const instance = await WebAssembly.instantiate(module, { env: { memory: heap.memory } });
  const exports = instance.exports as unknown as KernelExports;
  let pool: ThreadPool | null = null;
  if (threads > 1) {
    try {
      pool = await ThreadPool.create(module, heap, threads);
    } catch {
      threads = 1; // helpers could not start (e.g. a CSP forbids blob: workers): the shared build runs alone
    }
  }
  const description = `wasm ${variant} ×${threads} thread${threads > 1 ? 's' : ''}`;
  const ops = new WasmOps(heap, exports, pool, description);
  const recurrent = wasmRecurrentKernels(heap, exports, pool);
  if (recurrent) ops.useRecurrentKernels(recurrent);
  return ops;
}
