/** Backend selection: requested backends, 'auto' without WebGPU or with a failing adapter → WASM with the reason. */
import { describe, expect, it } from 'vitest';
import {
  createBackend,
  isSoftwareAdapter,
  selectBackend,
  webGpuUnavailableReason,
} from '../../../src/backend/select-backend.js';
import { isLlmError } from '../../../src/errors.js';

describe('selectBackend', () => {
  it('gives the requested backend', async () => {
    const s = await selectBackend('cpu');
    expect(s).toMatchObject({ name: 'cpu', reason: 'requested' });
    expect(s.ops.name).toBe('cpu');
    s.ops.destroy();
  });

  it('refuses webgpu where there is none, naming what to do', async () => {
    expect(webGpuUnavailableReason()).toMatch(/navigator\.gpu/);
    await expect(createBackend('webgpu', { discoverNodeGpu: false })).rejects.toSatisfy(
      (e) => isLlmError(e, 'webgpu-unavailable') && /backend: 'wasm'/.test((e as Error).message),
    );
    await expect(createBackend('tpu' as never)).rejects.toSatisfy((e) => isLlmError(e, 'invalid-request'));
  });

  it("'auto' falls back to WASM and says why (no WebGPU; an adapter that fails)", async () => {
    const none = await selectBackend('auto', { threads: 1, discoverNodeGpu: false });
    expect(none.name).toBe('wasm');
    expect(none.reason).toMatch(/^auto: WebGPU is not available here.*; using wasm/);
    none.ops.destroy();
    const brokenGpu = { requestAdapter: async () => null } as unknown as GPU;
    const failing = await selectBackend('auto', { threads: 1, gpu: brokenGpu });
    expect(failing.name).toBe('wasm');
    expect(failing.reason).toMatch(/^auto: WebGPU failed to start/);
    failing.ops.destroy();
  });

  it('recognises software adapters (passed over for WASM in Node)', () => {
    const adapter = (info: Partial<GPUAdapterInfo> & { isFallbackAdapter?: boolean }) =>
      ({ info: { vendor: '', architecture: '', device: '', description: '', ...info } }) as unknown as GPUAdapter;
    expect(isSoftwareAdapter(adapter({ description: 'llvmpipe: Mesa 25.0.7 (LLVM 15.0.6)' }))).toBe(true);
    expect(isSoftwareAdapter(adapter({ vendor: 'google', architecture: 'swiftshader' }))).toBe(true);
    expect(isSoftwareAdapter(adapter({ isFallbackAdapter: true }))).toBe(true);
    expect(isSoftwareAdapter(adapter({ vendor: 'nvidia', description: 'NVIDIA H200' }))).toBe(false);
  });

  it('an aborted signal stops selection', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(selectBackend('cpu', { signal: ac.signal })).rejects.toSatisfy((e) => isLlmError(e, 'aborted'));
  });
});
