/**
 * Where the demo's engine runs. The one place that creates it.
 *
 * With WebGPU (or `auto` where the page sees WebGPU) the engine lives in a SharedWorker, so a second tab of the demo
 * reuses the model the first one loaded instead of loading a second copy. The WASM backend stays in a dedicated
 * worker: a SharedWorker is never cross-origin isolated in Chromium, so WASM would run on one thread there instead of
 * several (see the README, "One engine for all tabs").
 */
import {
  createSharedWorkerEngine,
  createWorkerEngine,
  type BackendChoice,
  type Engine,
  type LoadProgress,
  type SharedWorkerEngine,
} from '../../src/index';

/** What the demo asks of an engine host. */
export interface StartEngineOptions {
  readonly model: string | File;
  /** The model's vision projector (mmproj URL, complete in the store): images in chat. */
  readonly mmproj?: string;
  readonly backend: BackendChoice;
  readonly onProgress?: (p: LoadProgress) => void;
}

/** How the demo's engine is hosted: 'attached' when another tab had already loaded (or was loading) the model. */
export type EngineHosting = 'dedicated' | 'shared' | 'attached';

/** The hosting of an engine made by `startEngine`. */
export function hostingOf(engine: Engine): EngineHosting {
  const sharing = (engine as Partial<SharedWorkerEngine>).sharing;
  if (!sharing || sharing.mode === 'dedicated') return 'dedicated';
  return sharing.attached ? 'attached' : 'shared';
}

/** Loads `model` in a worker and resolves with its engine (rejects with the library's `LlmError`). */
export function startEngine(opts: StartEngineOptions): Promise<Engine> {
  const options = {
    model: opts.model,
    backend: opts.backend,
    ...(opts.mmproj !== undefined ? { mmproj: opts.mmproj } : {}),
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
  };
  return sharesEngine(opts.backend) ? createSharedWorkerEngine(options) : createWorkerEngine(options);
}

/** Whether the engine for `backend` is hosted in the SharedWorker (WebGPU) or a dedicated worker (WASM threads). */
function sharesEngine(backend: BackendChoice): boolean {
  if (backend === 'wasm' || backend === 'cpu') return false;
  return typeof navigator !== 'undefined' && 'gpu' in navigator;
}
