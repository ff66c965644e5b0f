/**
 * Words the demo shows people: the active backend as a short badge ("WebGPU f16", "WASM relaxed-simd ×4 threads"),
 * errors rewritten with what to do next, and download progress with speed and time left.
 */
import { isLlmError, type BackendInfo } from '../../src/index';
import { formatBytes } from './catalogue';

/** Short label of the backend in use: 'WebGPU f16', 'WebGPU f32', 'WASM + 4 threads' (details go in a tooltip). */
export function backendLabel(backend: BackendInfo): string {
  const d = backend.description;
  if (backend.name === 'webgpu') return `WebGPU ${/\bf16\b/.test(d) ? 'f16' : 'f32'}`;
  if (backend.name === 'wasm') {
    const threads = Number(/×(\d+)/.exec(d)?.[1] ?? 1);
    return threads > 1 ? `WASM + ${threads} threads` : 'WASM (1 thread)';
  }
  return backend.name === 'cpu' ? 'CPU (reference)' : backend.name;
}

/** What to do about each error code, in plain words. */
const ADVICE: Partial<Record<string, string>> = {
  'webgpu-unavailable': 'This browser or device has no usable WebGPU. Reload with ?backend=wasm to run on the CPU.',
  'feature-missing': 'This browser lacks a feature the model needs. Try the latest Chrome, Edge or Firefox, or ?backend=wasm.',
  'device-lost': 'The GPU was reset (often: out of GPU memory). Load the model again, or pick a smaller one.',
  'out-of-memory': 'The model does not fit in this device’s memory. Choose a smaller model (see “Needs about …”).',
  network: 'The download failed. Check the URL and your connection, then press Load again: it resumes where it stopped.',
  'range-unsupported': 'The server does not allow partial downloads (HTTP Range). Download the file and open it as a local .gguf.',
  'storage-quota': 'Not enough storage for this model. Delete cached models in the sidebar or free disk space.',
  'gguf-invalid': 'This is not a valid GGUF file (or it is truncated). Check the URL or file.',
  'unsupported-type': 'This model uses a quantization type that is not supported yet. Try a Q4_K_M, Q4_0 or Q8_0 file.',
  'unsupported-arch': 'This model architecture is not supported yet. Pick one from the catalogue.',
  template: 'The model’s chat template could not be used. Reload with ?raw=1 for plain text completion.',
  'context-overflow': 'The conversation is longer than the model’s context. Start a new chat or edit an earlier message.',
};

/** The message of `e` followed by advice for its code; null for aborts (which are not errors to the user). */
export function describeError(e: unknown): string | null {
  if (isLlmError(e, 'aborted')) return null;
  if (isLlmError(e)) {
    const advice = ADVICE[e.code];
    return advice ? `${e.message}\n\n${advice}` : e.message;
  }
  if (e instanceof DOMException && e.name === 'QuotaExceededError') return `Storage is full. ${ADVICE['storage-quota']}`;
  return e instanceof Error ? e.message : String(e);
}

/** Seconds as '42 s', '3 min 5 s', '1 h 2 min'. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.ceil(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Speed meter over a sliding window of progress samples (bytes/s and time left). */
export class SpeedMeter {
  private readonly samples: { t: number; bytes: number }[] = [];

  /** Records `bytes` done at time `t` (ms) and returns the text to show. */
  update(bytes: number, total: number, t = performance.now()): string {
    this.samples.push({ t, bytes });
    while (this.samples.length > 2 && t - this.samples[0].t > 5000) this.samples.shift();
    const first = this.samples[0];
    const seconds = (t - first.t) / 1000;
    const speed = seconds > 0.25 ? (bytes - first.bytes) / seconds : 0;
    const parts = [`${formatBytes(bytes)} of ${formatBytes(total)}`];
    if (total > 0) parts[0] += ` (${Math.floor((100 * bytes) / total)} %)`;
    if (speed > 0) parts.push(`${formatBytes(speed)}/s`, `${formatDuration((total - bytes) / speed)} left`);
    return parts.join(' · ');
  }

  reset(): void {
    this.samples.length = 0;
  }
}
