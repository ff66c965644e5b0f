/**
 * Where the hardware GEMV takes Q8 activations (gemv_sg's dot4I8Packed path, issue 23), decided without a GPU: the
 * device context turns it on where the WebGPU entry point offers the WGSL language feature
 * `packed_4x8_integer_dot_product` (or when forced), and gemv_sg then uses it for the row-split types that have a
 * `dot_chunk_q8` (Q4_0, Q8_0) only; its composed WGSL carries dot4I8Packed only then.
 */

import { describe, expect, it } from 'vitest';
import { requestGpuContext } from '../../src/backend/webgpu/device.js';
import { gemvSgInt8, gemvSgQuant } from '../../src/backend/webgpu/gemv-sg-quant.js';
import { getGpuQuantLayout } from '../../src/backend/webgpu/upload.js';
import { GgmlType } from '../../src/gguf/types.js';

/** A device object with what requestGpuContext reads of a caller-provided device. */
const device = {
  features: new Set(['subgroups']),
  limits: { maxStorageBufferBindingSize: 1 << 27, maxBufferSize: 1 << 28 },
} as unknown as GPUDevice;
const gpuWith = (features: string[]): GPU => ({ wgslLanguageFeatures: new Set(features) }) as unknown as GPU;

describe('Q8-activation GEMV selection', () => {
  it('is on where the entry point offers packed_4x8_integer_dot_product, off elsewhere, forced either way', async () => {
    const on = await requestGpuContext({ device, gpu: gpuWith(['packed_4x8_integer_dot_product']) });
    const off = await requestGpuContext({ device, gpu: gpuWith(['pointer_composite_access']) });
    const forcedOff = await requestGpuContext({
      device,
      gpu: gpuWith(['packed_4x8_integer_dot_product']),
      int8Dot: false,
    });
    const forcedOn = await requestGpuContext({ device, gpu: gpuWith([]), int8Dot: true });
    expect([on.isInt8Dot, off.isInt8Dot, forcedOff.isInt8Dot, forcedOn.isInt8Dot]).toEqual([true, false, false, true]);
  });

  it('gemv_sg takes it for row-split Q4_0 and Q8_0 only, and composes dot4I8Packed only then', () => {
    const hw = (t: GgmlType) => getGpuQuantLayout(t, 'w', 'hardware');
    for (const t of [GgmlType.Q4_0, GgmlType.Q8_0]) {
      expect(gemvSgInt8(hw(t), true)).toBe(true);
      expect(gemvSgInt8(hw(t), false)).toBe(false);
      expect(gemvSgQuant(hw(t), true).name).toMatch(/_dot4$/);
      expect(gemvSgQuant(hw(t), true).wgsl).toContain('dot4I8Packed');
      expect(gemvSgQuant(hw(t), false).wgsl).not.toContain('dot4I8Packed');
    }
    for (const l of [hw(GgmlType.Q5_0), hw(GgmlType.IQ4_NL), hw(GgmlType.Q4_K), getGpuQuantLayout(GgmlType.Q4_0)]) {
      expect(gemvSgInt8(l, true), l.name).toBe(false);
      expect(gemvSgQuant(l, true).wgsl, l.name).not.toContain('dot4I8Packed');
    }
  });
});
