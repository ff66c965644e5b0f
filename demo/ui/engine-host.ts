/**
 * Where the demo's engine runs. The one place that creates it, so switching the host (a dedicated Web Worker today,
 * a SharedWorker shared by every tab later) is a one-line change here.
 */
import { createWorkerEngine, type BackendChoice, type Engine, type LoadProgress } from '../../src/index';

/** What the demo asks of an engine host. */
export interface StartEngineOptions {
  readonly model: string | File;
  readonly backend: BackendChoice;
  readonly onProgress?: (p: LoadProgress) => void;
}

/** Loads `model` in a worker and resolves with its engine (rejects with the library's `LlmError`). */
export function startEngine(opts: StartEngineOptions): Promise<Engine> {
  return createWorkerEngine({ model: opts.model, backend: opts.backend, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) });
}
