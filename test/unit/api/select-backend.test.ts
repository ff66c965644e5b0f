/** Backend selection: requested backends, 'auto' without WebGPU or with a failing adapter → WASM with the reason. */
import { describe, expect, it } from 'vitest';
import { createBackend, selectBackend, webGpuUnavailableReason } from '../../../src/backend/select-backend.js';
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
    await expect(createBackend('webgpu')).rejects.toSatisfy((e) => isLlmError(e, 'webgpu-unavailable') && /backend: 'wasm'/.test((e as Error).message));
    await expect(createBackend('tpu' as never)).rejects.toSatisfy((e) => isLlmError(e, 'invalid-request'));
  });

  it("'auto' falls back to WASM and says why (no WebGPU; an adapter that fails)", async () => {
    const none = await selectBackend('auto', { threads: 1 });
    expect(none.name).toBe('wasm');
    expect(none.reason).toMatch(/^auto: WebGPU is not available here.*; using wasm/);
    none.ops.destroy();
    const brokenGpu = { requestAdapter: async () => null } as unknown as GPU;
    const failing = await selectBackend('auto', { threads: 1, gpu: brokenGpu });
    expect(failing.name).toBe('wasm');
    expect(failing.reason).toMatch(/^auto: WebGPU failed to start/);
    failing.ops.destroy();
  });

  it('an aborted signal stops selection', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(selectBackend('cpu', { signal: ac.signal })).rejects.toSatisfy((e) => isLlmError(e, 'aborted'));
  });
});
