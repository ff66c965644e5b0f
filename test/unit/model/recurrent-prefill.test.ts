/**
 * Prefill of the recurrent layers (conv window + scan head by head over a step's tokens) on the CPU reference and
 * WASM backends (see recurrent-prefill-check.ts), and WASM's SIMD scans against the plain-TS ones.
 */

import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../../src/backend/wasm/index.js';
import { maxAbsDiff } from '../../../src/model/conformance.js';
import { prefillChecks, RECURRENT_PREFILL_FIXTURES } from '../../helpers/recurrent-prefill-check.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describe.each(RECURRENT_PREFILL_FIXTURES)('recurrent prefill: %s', (_name, fixture) => {
  it('cpu and wasm: a long prompt equals token-by-token decode and a snapshot resume; the backends agree', async () => {
    const cpu = await prefillChecks(createCpuOps(), fixture, 2e-4);
    // WASM's batched Q8 matmuls round apart from its one-row ones (lfm2, without a scan, differs as much).
    const wasm = await prefillChecks(await createWasmOps({ threads: 1 }), fixture, 0.3);
    expect(maxAbsDiff(wasm, cpu)).toBeLessThanOrEqual(0.5);
  });
});

describe('recurrent prefill on WASM ×2 threads (state in the shared memory)', () => {
  it('qwen35 and granitehybrid: the same checks, and the one-thread logits', async () => {
    for (const [, fixture] of RECURRENT_PREFILL_FIXTURES.slice(0, 2)) {
      const one = await prefillChecks(await createWasmOps({ threads: 1 }), fixture, 0.3);
      const ops = await createWasmOps({ threads: 2 });
      try {
        const two = await prefillChecks(ops, fixture, 0.3);
        expect(maxAbsDiff(two, one)).toBeLessThanOrEqual(1e-3);
      } finally {
        ops.destroy(); // stops the helper threads
      }
    }
  });
});
