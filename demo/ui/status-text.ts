/**
 * Words the demo shows people: the active backend as a short badge ("WebGPU f16", "WASM relaxed-simd ×4 threads")
 * and download progress with speed and time left (errors: error-text.ts).
 */
import type { BackendInfo } from '../../src/index';
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

/** Seconds as '42 s', '3 min 5 s', '1 h 2 min'. */
function formatDuration(seconds: number): string {
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

/**
 * The speed of one answer: `tokens` generated, the first at `firstAt` and the last at `lastAt` (ms, same clock). The
 * rate counts the tokens after the first over the time they took — the decode speed a person saw. Null when it
 * cannot be measured (fewer than two tokens).
 */
export function speedText(tokens: number, firstAt: number, lastAt: number): string | null {
  if (tokens < 2 || !(lastAt > firstAt)) return null;
  const seconds = (lastAt - firstAt) / 1000;
  return `${tokens} tokens in ${seconds.toFixed(2)} s · ${((tokens - 1) / seconds).toFixed(1)} tok/s`;
}
