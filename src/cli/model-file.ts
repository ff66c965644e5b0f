/**
 * How the `webgguf` sub-commands open a model: a local path (Node file handle) or an http(s) URL (range reader) as a
 * `ByteSource`, its GGUF header parsed, and — for the commands that run it — a backend started (WebGPU through Dawn
 * on Mesa lavapipe in Node) and the weights loaded tensor by tensor. One place, so every command opens files alike.
 */

import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readModelHeader } from '../api/create-engine.js';
import { createBackend, nodeGpu, type BackendName } from '../backend/select-backend.js';
import { KERNEL_SETS, type KernelSet } from '../backend/webgpu/device.js';
import type { Ops } from '../backend/ops.js';
import { LlmError } from '../errors.js';
import { parseGguf } from '../gguf/parse.js';
import type { GgufFile, GgufValue } from '../gguf/types.js';
import type { ByteSource } from '../io/byte-source.js';
import { openModelSource } from '../io/index.js';
import { loadArchitecture } from '../model/arch/index.js';
import { loadTransformer, readModelConfig } from '../model/load.js';
import type { TransformerModel } from '../model/transformer.js';

/** Backends a command can run a model on; the first is the default. */
export const CLI_BACKENDS: readonly BackendName[] = ['cpu', 'wasm', 'webgpu'];

/** Values of `--kernels` (WebGPU kernel set); the first is the default. */
const CLI_KERNEL_SETS: readonly KernelSet[] = KERNEL_SETS;

/**
 * The `--kernels` flag of a command: undefined when not given; an `invalid-request` when it is not a kernel set
 * or the backend is not webgpu.
 */
export function kernelsFlag(command: string, value: string | undefined, backend: BackendName): KernelSet | undefined {
  if (value === undefined) return undefined;
  if (!(CLI_KERNEL_SETS as readonly string[]).includes(value)) {
    throw new LlmError(
      'invalid-request',
      `${command}: --kernels must be one of ${CLI_KERNEL_SETS.join(', ')}, got '${value}'`,
      { details: { field: '--kernels' } },
    );
  }
  if (backend !== 'webgpu') {
    throw new LlmError(
      'invalid-request',
      `${command}: --kernels applies to --backend webgpu only (got --backend ${backend})`,
      { details: { field: '--kernels' } },
    );
  }
  return value as KernelSet;
}

/** Mesa's software Vulkan driver: the Vulkan ICD the CLI points Dawn at when none is chosen. */
const LAVAPIPE_ICD = '/usr/share/vulkan/icd.d/lvp_icd.json';

/** A parsed model file whose tensors are read on demand. */
export interface ModelFile {
  /** The path or URL it was opened from. */
  readonly path: string;
  readonly source: ByteSource;
  readonly gguf: GgufFile;
}

/**
 * Opens `target` — a local path, a `file:` URL or an http(s) URL — through the library's `openModelSource` with the
 * IndexedDB cache off (a URL is read live with range requests), and parses its header only. Close `file.source` when
 * done.
 */
export async function openModelFile(target: string, signal: AbortSignal): Promise<ModelFile> {
  const source = await openModelSource(target, { signal, cache: false });
  try {
    const gguf = await parseGguf(source, { signal });
    await loadArchitecture(gguf.metadata['general.architecture']); // so readModelConfig knows the encoders too
    return { path: target, source, gguf };
  } catch (e) {
    await source.close?.();
    throw e;
  }
}

/** The llama.cpp reference beside a model (`x.gguf` → `x.reference.json`, format in shared/models/README.md), or null. */
export function referencePathFor(ggufPath: string): string | null {
  const p = join(dirname(ggufPath), `${basename(ggufPath, '.gguf')}.reference.json`);
  return existsSync(p) ? p : null;
}

/** The header of a local GGUF file or an http(s) URL, read live (no caching); the source is closed again. */
async function loadModelHeader(target: string, signal: AbortSignal): Promise<GgufFile> {
  return readModelHeader(target, signal, { cache: false });
}

/** The metadata of a local GGUF file or an http(s) URL (header only). */
export async function loadModelMetadata(
  target: string,
  signal: AbortSignal,
): Promise<Readonly<Record<string, GgufValue>>> {
  return (await loadModelHeader(target, signal)).metadata;
}

/**
 * The WebGPU entry point in Node: npm `webgpu` (Dawn), on lavapipe when its ICD is installed and no
 * `VK_ICD_FILENAMES` is set. Undefined where `navigator.gpu` exists (a browser) or Dawn cannot be loaded.
 */
export async function cliGpu(): Promise<GPU | undefined> {
  if ((globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu) return undefined;
  if (!process.env.VK_ICD_FILENAMES && existsSync(LAVAPIPE_ICD)) process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
  return nodeGpu();
}

/** Starts backend `name` (the reference 'cpu', 'wasm' with `threads`, or 'webgpu' through Dawn in Node). */
export async function startBackend(
  name: BackendName,
  options: { threads?: number; signal?: AbortSignal; preferF16?: boolean; kernels?: KernelSet } = {},
): Promise<Ops> {
  if (name !== 'webgpu') return createBackend(name, options);
  const hasNavigatorGpu = Boolean((globalThis as { navigator?: { gpu?: GPU } }).navigator?.gpu);
  const gpu = await cliGpu();
  if (!gpu && !hasNavigatorGpu) {
    throw new LlmError(
      'webgpu-unavailable',
      "starting the webgpu backend: the npm package 'webgpu' (Dawn for Node) failed to load; use --backend wasm",
    );
  }
  return createBackend(name, { ...options, ...(gpu ? { gpu } : {}) });
}

/**
 * Loads `file` on `backend` with room for `positions` KV positions (checked against the training context). The file
 * is read tensor by tensor, never whole. `model.destroy()` releases the backend.
 */
export async function loadModel(
  file: ModelFile,
  backend: BackendName,
  positions: number,
  signal: AbortSignal,
  threads?: number,
  preferF16?: boolean,
  kernels?: KernelSet,
): Promise<TransformerModel> {
  const config = readModelConfig(file.gguf);
  if (positions > config.trainContextLength) {
    throw new LlmError(
      'context-overflow',
      `${positions} positions exceed the model's training context of ${config.trainContextLength}`,
      {
        details: { positions, contextLength: config.trainContextLength },
      },
    );
  }
  const ops = await startBackend(backend, {
    signal,
    ...(threads !== undefined ? { threads } : {}),
    ...(preferF16 !== undefined ? { preferF16 } : {}),
    ...(kernels !== undefined ? { kernels } : {}),
  });
  try {
    return await loadTransformer(file.gguf, file.source, ops, { contextLength: Math.max(1, positions), signal });
  } catch (e) {
    ops.destroy();
    throw e;
  }
}
