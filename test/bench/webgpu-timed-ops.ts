/**
 * The benchmark's WebGPU backend, in Node (Dawn) and in the browser page alike: the device is requested as the
 * library does (features incl. `timestamp-query` when offered) and, when it has timestamp queries, wrapped by a GPU
 * timer so the profiled steps report GPU time per op kind. Decode rates are measured with the timer disabled.
 */

import { requestGpuContext } from '../../src/backend/webgpu/device.js';
import { createGpuTimer, gpuTimerUnavailableReason } from './gpu-timer.js';
import { createWebGpuOps } from '../../src/backend/webgpu/index.js';
import type { CreatedOps } from './measure-model.js';

/** Options of `createTimedWebGpuOps`. */
export interface TimedWebGpuOptions {
  /** The WebGPU entry point (default `navigator.gpu`). */
  readonly gpu?: GPU;
  /** Skip GPU timestamps even where offered (the breakdown is then encode time). */
  readonly noTimestamps?: boolean;
  /** WebGPU kernel set (default: as the adapter says). */
  readonly kernels?: 'auto' | 'hardware' | 'software';
}

/**
 * Creates the WebGPU backend with a GPU timer where the device has `timestamp-query`. The device is created here
 * (not by the backend), so `dispose` destroys it after the model.
 */
export async function createTimedWebGpuOps(o: TimedWebGpuOptions, notes: string[]): Promise<CreatedOps> {
  const gpu = o.gpu ?? (typeof navigator !== 'undefined' ? navigator.gpu : undefined);
  if (!gpu) throw new Error('bench: no WebGPU here (navigator.gpu is missing and no GPU object was given)');
  const adapter = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!adapter) throw new Error('bench: requestAdapter() returned no adapter');
  const ctx = await requestGpuContext({ adapter, ...(o.kernels ? { kernels: o.kernels } : {}) });
  const reason = o.noTimestamps ? 'disabled by the caller' : gpuTimerUnavailableReason(ctx.device);
  const timer = reason === null ? createGpuTimer(ctx.device) : null;
  const ops = await createWebGpuOps({ adapter, device: timer?.device ?? ctx.device });
  const info = adapter.info;
  notes.push(
    `adapter: ${[info.vendor, info.architecture, info.device, info.description].filter((s) => s).join(' | ') || 'no info'}; ` +
      `timestamp-query ${ctx.hasTimestampQuery ? 'on' : 'off'}`,
  );
  return {
    ops,
    runtime: 'webgguf-webgpu',
    heapBytes: () => null,
    gpuTimer: timer,
    ...(reason !== null ? { gpuTimerNote: reason } : {}),
    dispose: () => {
      timer?.destroy();
      ctx.device.destroy();
    },
  };
}
