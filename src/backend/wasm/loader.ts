/**
 * Finds and loads the WASM kernel module: detects which builds this engine can run (relaxed-simd, simd128, scalar;
 * threads) with `WebAssembly.validate` on tiny probe modules, then fetches (browser) or reads (Node) the committed
 * `.wasm` from wasm/build/ and compiles it. The module imports `env.memory`; see wasm/assembly/index.ts.
 */

import { LlmError } from '../../errors.js';
import { classifyDotAdd, type DotAddSupport, probeDotAdd } from './dot-add-probe.js';

/**
 * Which instruction set a kernel build uses. `relaxed-dot` is relaxed-simd with the integer tiles accumulating by
 * `i32x4.relaxed_dot_i8x16_i7x16_add_s` (same results); picked only where the engine runs that as one instruction.
 */
export type WasmVariant = 'scalar' | 'simd128' | 'relaxed-simd' | 'relaxed-dot';

/** What the running engine supports. */
export interface WasmFeatures {
  readonly simd128: boolean;
  readonly relaxedSimd: boolean;
  /**
   * `i32x4.relaxed_dot_i8x16_i7x16_add_s` as the relaxed-dot build needs it: 'fast' = exact and one instruction
   * (AVX-VNNI, Arm dot product; that build is then the best), 'exact' = exact but slower, 'none' = missing or wrong
   * (Node 20). See dot-add-probe.ts.
   */
  readonly dotAdd: DotAddSupport;
  /** Shared memory, atomics and a worker API are all available (and, in a browser, the page is crossOriginIsolated). */
  readonly threads: boolean;
}

// Probe: (func (param i32) (result i32)) using i32x4.dot_i16x8_s.
const SIMD_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x03, 0x02, 0x01,
  0x00, 0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, 0x0a, 0x14, 0x01, 0x12, 0x01, 0x01, 0x7b, 0x20, 0x00, 0xfd, 0x11,
  0x22, 0x01, 0x20, 0x01, 0xfd, 0xba, 0x01, 0xfd, 0x1b, 0x00, 0x0b,
]);
// Probe: the same using i16x8.relaxed_dot_i8x16_i7x16_s (the one relaxed op the kernels depend on).
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x03, 0x02, 0x01,
  0x00, 0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, 0x0a, 0x15, 0x01, 0x13, 0x01, 0x01, 0x7b, 0x20, 0x00, 0xfd, 0x11,
  0x22, 0x01, 0x20, 0x01, 0xfd, 0x92, 0x02, 0xfd, 0x18, 0x00, 0xc1, 0x0b,
]);
// Probe: imports a shared memory (env.memory, 0…1 pages) and does an i32.atomic.load.
const THREADS_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7f, 0x01, 0x7f, 0x02, 0x10, 0x01,
  0x03, 0x65, 0x6e, 0x76, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 0x02, 0x03, 0x00, 0x01, 0x03, 0x02, 0x01, 0x00,
  0x07, 0x05, 0x01, 0x01, 0x66, 0x00, 0x00, 0x0a, 0x0a, 0x01, 0x08, 0x00, 0x20, 0x00, 0xfe, 0x10, 0x02, 0x00, 0x0b,
]);

function validates(bytes: Uint8Array<ArrayBuffer>): boolean {
  try {
    return WebAssembly.validate(bytes);
  } catch {
    return false;
  }
}

/** True in Node.js (worker_threads), false in browsers and other hosts (Web Workers). */
export const IS_NODE: boolean =
  typeof process !== 'undefined' && typeof process.versions === 'object' && typeof process.versions.node === 'string';

/**
 * Detects the WebAssembly features of this engine. Node 20 runs relaxed SIMD only with
 * `--experimental-wasm-relaxed-simd`; without it this reports `relaxedSimd: false` and simd128 is used.
 */
export function detectWasmFeatures(): WasmFeatures {
  const simd128 = validates(SIMD_PROBE);
  const relaxedSimd = simd128 && validates(RELAXED_PROBE);
  const dotAdd = relaxedSimd ? classifyDotAdd(probeDotAdd()) : 'none';
  let threads = typeof SharedArrayBuffer === 'function' && typeof Atomics === 'object' && validates(THREADS_PROBE);
  if (threads && !IS_NODE) {
    const g = globalThis as { crossOriginIsolated?: boolean; Worker?: unknown };
    threads = g.crossOriginIsolated === true && typeof g.Worker === 'function';
  }
  if (threads) {
    try {
      new WebAssembly.Memory({ initial: 1, maximum: 1, shared: true });
    } catch {
      threads = false;
    }
  }
  return { simd128, relaxedSimd, dotAdd, threads };
}

/** The best variant the engine supports. */
export function bestVariant(features: WasmFeatures): WasmVariant {
  if (features.dotAdd === 'fast') return 'relaxed-dot';
  return features.relaxedSimd ? 'relaxed-simd' : features.simd128 ? 'simd128' : 'scalar';
}

/** True when `variant` runs on an engine with `features`. */
export function isVariantSupported(variant: WasmVariant, features: WasmFeatures): boolean {
  if (variant === 'relaxed-dot') return features.dotAdd === 'fast';
  return variant === 'scalar' || (variant === 'simd128' ? features.simd128 : features.relaxedSimd);
}

// Literal `new URL(…, import.meta.url)` calls so bundlers (Vite) emit the files as assets.
function buildUrl(variant: WasmVariant, shared: boolean): URL {
  if (shared) {
    if (variant === 'scalar') return new URL('../../../wasm/build/kernels-scalar-threads.wasm', import.meta.url);
    if (variant === 'simd128') return new URL('../../../wasm/build/kernels-simd128-threads.wasm', import.meta.url);
    if (variant === 'relaxed-dot')
      return new URL('../../../wasm/build/kernels-relaxed-dot-threads.wasm', import.meta.url);
    return new URL('../../../wasm/build/kernels-relaxed-simd-threads.wasm', import.meta.url);
  }
  if (variant === 'scalar') return new URL('../../../wasm/build/kernels-scalar.wasm', import.meta.url);
  if (variant === 'simd128') return new URL('../../../wasm/build/kernels-simd128.wasm', import.meta.url);
  if (variant === 'relaxed-dot') return new URL('../../../wasm/build/kernels-relaxed-dot.wasm', import.meta.url);
  return new URL('../../../wasm/build/kernels-relaxed-simd.wasm', import.meta.url);
}

/** File name of a build inside wasm/build/. */
function buildFileName(variant: WasmVariant, shared: boolean): string {
  return `kernels-${variant}${shared ? '-threads' : ''}.wasm`;
}

async function readBytes(url: URL): Promise<Uint8Array<ArrayBuffer>> {
  if (url.protocol === 'file:') {
    const fs = await import('node:fs/promises');
    const { fileURLToPath } = await import('node:url');
    return new Uint8Array(await fs.readFile(fileURLToPath(url)));
  }
  const res = await fetch(url);
  if (!res.ok) throw new Error(`HTTP ${res.status} ${res.statusText}`);
  return new Uint8Array(await res.arrayBuffer());
}

/**
 * Where else a Node bundle may find the builds: a bundler that leaves `new URL(…, import.meta.url)` alone (an SSR/CLI
 * build such as dist/cli/cli.js) moves the module, not the files, which ship in the package's wasm/build/.
 */
function nodeFallbackUrls(variant: WasmVariant, shared: boolean): URL[] {
  const name = buildFileName(variant, shared);
  return ['../wasm/build/', '../../wasm/build/', '../../../wasm/build/'].map(
    (dir) => new URL(dir + name, import.meta.url),
  );
}

/**
 * Loads and compiles one kernel build. `baseUrl`, when given, is the folder holding the `.wasm` files (for hosts
 * that serve them from elsewhere); otherwise they resolve next to this module as built.
 * @throws LlmError('feature-missing') when the file cannot be read or compiled.
 */
export async function loadKernelModule(
  variant: WasmVariant,
  shared: boolean,
  baseUrl?: string | URL,
): Promise<WebAssembly.Module> {
  const url = baseUrl !== undefined ? new URL(buildFileName(variant, shared), baseUrl) : buildUrl(variant, shared);
  let bytes: Uint8Array<ArrayBuffer> | null = null;
  let firstError: unknown = null;
  const candidates =
    url.protocol === 'file:' && baseUrl === undefined ? [url, ...nodeFallbackUrls(variant, shared)] : [url];
  for (const candidate of candidates) {
    try {
      bytes = await readBytes(candidate);
      break;
    } catch (e) {
      firstError ??= e;
    }
  }
  try {
    if (bytes === null) throw firstError;
    return await WebAssembly.compile(bytes);
  } catch (cause) {
    throw new LlmError(
      'feature-missing',
      `loading the WASM kernels ${buildFileName(variant, shared)} from ${url.href} failed: ${String(cause)}. ` +
        'Check that wasm/build/*.wasm are served next to the library (or pass wasmBaseUrl).',
      { cause, details: { variant, shared, url: url.href } },
    );
  }
}
