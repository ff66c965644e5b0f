/**
 * The load-time memory check: before any weight is downloaded or uploaded, plan the backend's memory (weights + KV
 * cache + activations) from the GGUF header alone and check it against the device. For a URL that is not yet in the
 * model store, only the header is read (HTTP range requests), so a model that cannot fit is refused before download.
 */

import type { BackendSelection } from '../backend/select-backend.js';
import { isLlmError, LlmError, throwIfAborted } from '../errors.js';
import { parseGguf } from '../gguf/parse.js';
import type { GgufFile } from '../gguf/types.js';
import { type ByteSource, HttpByteSource, readManifest, splitPartUrls } from '../io/index.js';
import { openPartsAsOne } from '../io/split-model.js';
import type { ModelConfig } from '../model/config.js';
import { activationBytes, type RunShape } from '../model/run-shape.js';
import { describeLayers, kvLayersOf } from '../model/layer-spec.js';
import type { ModelInput } from './engine.js';

/** First range read for a remote header (the parser grows it geometrically when the header is larger). */
const HEADER_FIRST_READ_BYTES = 256 * 1024;

/** The http(s) URL of `model`, or null when it is a Blob, a path or another scheme. */
function httpUrlOf(model: ModelInput): URL | null {
  if (model instanceof URL) return model.protocol === 'http:' || model.protocol === 'https:' ? model : null;
  if (typeof model === 'string' && /^https?:\/\//i.test(model)) return new URL(model);
  return null;
}

/**
 * For an http(s) URL that opening would download into the model store (IndexedDB present, no complete entry):
 * reads the GGUF header only, with range requests, and closes the connection. Null otherwise, or when the server
 * cannot be read live (the header is then parsed from the opened source).
 * @throws LlmError (e.g. 'gguf-invalid', 'aborted') when the header is read but is not a usable GGUF.
 */
export async function readHeaderBeforeDownload(model: ModelInput, signal?: AbortSignal): Promise<GgufFile | null> {
  const url = httpUrlOf(model);
  if (url === null || typeof indexedDB === 'undefined') return null;
  let manifest;
  try {
    manifest = await readManifest(url.href);
  } catch {
    manifest = undefined; // an unusable store: openModelSource reports it
  }
  if (manifest?.complete === true) return null;
  throwIfAborted(signal, 'reading the model header');
  let source: ByteSource;
  try {
    // A split model is planned from all its parts' headers (the merged view), not from the first part's alone.
    const parts = splitPartUrls(url.href);
    source =
      parts === null
        ? await HttpByteSource.open(url, { signal })
        : await openPartsAsOne(
            parts.map((p) => () => HttpByteSource.open(p, { signal })),
            signal,
          );
  } catch (e) {
    // Best effort: a server the live reader cannot use (no Range on a large file) may still download; the plan
    // then runs after the download, and real network errors are reported by that download.
    if (isLlmError(e, 'aborted') || signal?.aborted) throw e;
    if (isLlmError(e, 'gguf-invalid') && splitPartUrls(url.href) !== null) throw e; // a bad split set: nothing is downloaded
    return null;
  }
  try {
    return await parseGguf(source, { signal, limits: { initialChunkBytes: HEADER_FIRST_READ_BYTES } });
  } finally {
    await source.close?.();
  }
}

/**
 * Plans the memory of `gguf` on `selection`'s backend for `shape`. WebGPU: `planMemory` against the device limits
 * and `budgetBytes`. Other backends check their limits when placing buffers, so nothing is planned for them here.
 * @throws LlmError('out-of-memory') with the numbers and the longest context that would fit.
 * @throws LlmError('unsupported-type') for a tensor type WebGPU cannot run.
 */
export async function checkMemoryPlan(
  selection: BackendSelection,
  gguf: GgufFile,
  config: ModelConfig,
  shape: RunShape,
  budgetBytes?: number,
): Promise<void> {
  if (selection.name !== 'webgpu') return;
  const limits = (
    selection.ops as {
      memoryLimits?: { maxStorageBufferBindingSize: number; maxBufferSize: number; kvBytesPerElement: 2 | 4 };
    }
  ).memoryLimits;
  if (!limits) return;
  const native = limits.kvBytesPerElement === 2 ? 'f16' : 'f32';
  if (shape.kvType !== undefined && shape.kvType !== native) {
    throw new LlmError(
      'unsupported-type',
      `planning GPU memory: the WebGPU backend stores KV as ${native} on this device and cannot store kvType '${shape.kvType}' yet`,
      { details: { kvType: shape.kvType, supported: [native] } },
    );
  }
  const { planMemory } = await import('../backend/webgpu/memory-plan.js');
  planMemory(
    {
      tensors: gguf.tensors,
      kvLayers: kvLayersOf(describeLayers(config)),
      contextLength: shape.contextLength,
      nSlots: shape.nSlots,
      kvBytesPerElement: limits.kvBytesPerElement,
      activationBytes: activationBytes(config, shape),
      kernels: (selection.ops as { kernelSet?: 'hardware' | 'software' }).kernelSet,
    },
    {
      maxStorageBufferBindingSize: limits.maxStorageBufferBindingSize,
      maxBufferSize: limits.maxBufferSize,
      budgetBytes,
    },
  );
}
