/**
 * Picks the backend for `backend: 'auto' | 'webgpu' | 'wasm' | 'cpu'` and says why: WebGPU when an adapter is
 * available and its device starts (the engine then also requires it to pass warmup), else WASM — multi-threaded
 * when the page is cross-origin isolated — and the plain-TS reference only when asked for. Backends are imported
 * on demand so a WASM-only page never loads the WebGPU code.
 */

import { LlmError, isLlmError, throwIfAborted } from '../errors.js';
import type { Ops } from './ops.js';
import type { KernelSet } from './webgpu/device.js';

/** A backend name as the API spells it. */
export type BackendName = 'webgpu' | 'wasm' | 'cpu';

/** The chosen backend with the reason, as reported in `EngineInfo.backend`. */
export interface BackendSelection {
  readonly ops: Ops;
  readonly name: BackendName;
  readonly reason: string;
}

/** Options passed through to the backends. */
export interface SelectBackendOptions {
  /**
   * WASM threads; default: the logical cores (at most 8) where shared memory works — Node, or a cross-origin
   * isolated page — else 1.
   */
  readonly threads?: number;
  /** The WebGPU entry point when there is no `navigator.gpu` (Node: `create([])` of npm `webgpu`). */
  readonly gpu?: GPU;
  /**
   * In Node without `gpu`: look for the optional npm `webgpu` package (Dawn) and use it (default true). For 'auto'
   * a software adapter found this way (lavapipe) is passed over for WASM, which is faster on the same CPU.
   */
  readonly discoverNodeGpu?: boolean;
  /** WebGPU: use `shader-f16` (f16 KV cache and tiles) where the device has it (default true); false forces f32. */
  readonly preferF16?: boolean;
  /**
   * WebGPU kernel set: 'hardware' (the kernels made for GPUs, also on a software adapter — how tests and `webgguf
   * profile` exercise them without a GPU), 'software', or 'auto' (default: from the adapter).
   */
  readonly kernels?: KernelSet;
  readonly signal?: AbortSignal;
}

/** Why WebGPU cannot be tried here, or null when it can. */
export function webGpuUnavailableReason(gpu?: GPU): string | null {
  if (gpu) return null;
  const nav = (globalThis as { navigator?: { gpu?: unknown } }).navigator;
  if (!nav?.gpu) return 'WebGPU is not available here (navigator.gpu is missing)';
  return null;
}

/** Whether WASM threads can work here (a cross-origin isolated page, or Node). */
function canUseWasmThreads(): boolean {
  const g = globalThis as {
    crossOriginIsolated?: boolean;
    process?: { versions?: { node?: string } };
    window?: unknown;
  };
  return g.crossOriginIsolated === true || (typeof g.process?.versions?.node === 'string' && g.window === undefined);
}

/** True in Node (not in a browser or a browser worker). */
function isNode(): boolean {
  const g = globalThis as { process?: { versions?: { node?: string } }; window?: unknown; WorkerGlobalScope?: unknown };
  return typeof g.process?.versions?.node === 'string' && g.window === undefined && g.WorkerGlobalScope === undefined;
}

/**
 * In Node without `navigator.gpu`: the GPU of the npm `webgpu` package (Dawn), when it is installed (it is an optional
 * dependency). Its WebGPU globals (GPUBufferUsage …) are installed where missing. Undefined when unavailable.
 * One Dawn instance per process, held here for the process's lifetime: Dawn keeps processing events for its devices
 * on a timer, and an instance that the garbage collector reclaims while a device is alive aborts the process.
 */
export async function nodeGpu(): Promise<GPU | undefined> {
  if (!isNode()) return undefined;
  nodeGpuInstance ??= createNodeGpu();
  return nodeGpuInstance;
}

let nodeGpuInstance: Promise<GPU | undefined> | undefined;

async function createNodeGpu(): Promise<GPU | undefined> {
  try {
    const specifier = 'webgpu';
    const mod = (await import(/* @vite-ignore */ specifier)) as {
      create(args: string[]): GPU;
      globals: Record<string, unknown>;
    };
    const g = globalThis as Record<string, unknown>;
    for (const [key, value] of Object.entries(mod.globals)) if (!(key in g)) g[key] = value;
    return mod.create([]);
  } catch {
    return undefined;
  }
}

/** A software rasterizer (lavapipe, SwiftShader, WARP): WebGPU there is slower than the WASM backend. */
export function isSoftwareAdapter(adapter: GPUAdapter): boolean {
  const info = adapter.info as GPUAdapterInfo & { isFallbackAdapter?: boolean };
  const text = `${info.vendor} ${info.architecture} ${info.device} ${info.description}`;
  return info.isFallbackAdapter === true || /llvmpipe|lavapipe|swiftshader|microsoft basic render|\bwarp\b/i.test(text);
}

/** Creates one backend by name. */
export async function createBackend(name: BackendName, options: SelectBackendOptions = {}): Promise<Ops> {
  throwIfAborted(options.signal, `starting the ${name} backend`);
  switch (name) {
    case 'cpu': {
      const { createCpuOps } = await import('./cpu/cpu-ops.js');
      return createCpuOps();
    }
    case 'wasm': {
      const { createWasmOps } = await import('./wasm/index.js');
      return createWasmOps({ threads: options.threads ?? (canUseWasmThreads() ? undefined : 1) });
    }
    case 'webgpu': {
      const gpu =
        options.gpu ?? (webGpuUnavailableReason() && options.discoverNodeGpu !== false ? await nodeGpu() : undefined);
      const why = webGpuUnavailableReason(gpu);
      if (why)
        throw new LlmError(
          'webgpu-unavailable',
          `starting the webgpu backend: ${why}; use backend: 'wasm' or a browser with WebGPU`,
        );
      const { createWebGpuOps } = await import('./webgpu/index.js');
      return createWebGpuOps({
        ...(gpu ? { gpu } : {}),
        ...(options.preferF16 !== undefined ? { preferF16: options.preferF16 } : {}),
        ...(options.kernels !== undefined ? { kernels: options.kernels } : {}),
      });
    }
    default:
      throw new LlmError('invalid-request', `backend '${String(name)}' is not one of 'auto', 'webgpu', 'wasm', 'cpu'`, {
        details: { field: 'backend' },
      });
  }
}

/** Resolves `choice` to a running backend; for 'auto' a WebGPU failure falls back to WASM with the reason kept. */
export async function selectBackend(
  choice: BackendName | 'auto',
  options: SelectBackendOptions = {},
): Promise<BackendSelection> {
  if (choice !== 'auto') {
    return { ops: await createBackend(choice, options), name: choice, reason: 'requested' };
  }
  let gpu = options.gpu;
  let why = webGpuUnavailableReason(gpu);
  const discovered = why !== null && isNode() && options.discoverNodeGpu !== false;
  if (discovered) {
    gpu = await nodeGpu();
    why = gpu ? null : 'WebGPU is not available in this Node (install the optional `webgpu` package)';
  }
  if (!why && discovered && gpu) {
    // In Node, a software adapter (lavapipe on a GPU-less machine) is slower than the WASM backend: prefer WASM.
    const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
    if (!adapter) why = 'no WebGPU adapter was found';
    else if (isSoftwareAdapter(adapter))
      why = `the WebGPU adapter is a software renderer (${adapter.info.description || adapter.info.vendor}), slower than WASM`;
  }
  if (!why) {
    options = { ...options, gpu };
    try {
      return {
        ops: await createBackend('webgpu', options),
        name: 'webgpu',
        reason: 'auto: a WebGPU adapter is available',
      };
    } catch (e) {
      if (isLlmError(e, 'aborted')) throw e;
      return wasmFallback(`auto: WebGPU failed to start (${e instanceof Error ? e.message : String(e)})`, options);
    }
  }
  return wasmFallback(`auto: ${why}`, options);
}

/** The WASM backend with the reason WebGPU was passed over. */
export async function wasmFallback(reason: string, options: SelectBackendOptions): Promise<BackendSelection> {
  const ops = await createBackend('wasm', options);
  const isolation = canUseWasmThreads() ? '' : ' (single-threaded: the page is not cross-origin isolated)';
  return { ops, name: 'wasm', reason: `${reason}; using ${ops.description}${isolation}` };
}
