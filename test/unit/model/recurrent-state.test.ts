/** Recurrent state snapshots and slot copies on the CPU reference and WASM backends (see recurrent-state-check.ts). */

import v8 from 'node:v8';
import { describe, it } from 'vitest';
import { createCpuOps } from '../../../src/backend/cpu/cpu-ops.js';
import { createWasmOps } from '../../../src/backend/wasm/index.js';
import { checkRecurrentState } from '../../helpers/recurrent-state-check.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

describe('recurrent state (lfm2)', () => {
  it('cpu: a snapshot written back resumes exactly; a slot copy carries the state', async () => {
    await checkRecurrentState(createCpuOps(), 0);
  });
  it('wasm: the same', async () => {
    await checkRecurrentState(await createWasmOps({ threads: 1 }), 1e-4);
  });
});

describe('recurrent state (qwen35: conv window + DeltaNet state)', () => {
  it('cpu: a snapshot written back resumes exactly; a slot copy carries the state', async () => {
    await checkRecurrentState(createCpuOps(), 0, 'qwen35-q8_0-s1.gguf');
  });
  it('wasm: the same', async () => {
    await checkRecurrentState(await createWasmOps({ threads: 1 }), 1e-4, 'qwen35-q8_0-s1.gguf');
  });
});

describe('recurrent state (granitehybrid: conv window + Mamba-2 state)', () => {
  it('cpu: a snapshot written back resumes exactly; a slot copy carries the state', async () => {
    await checkRecurrentState(createCpuOps(), 0, 'granitehybrid-q8_0-s1.gguf');
  });
  it('wasm: the same', async () => {
    await checkRecurrentState(await createWasmOps({ threads: 1 }), 1e-4, 'granitehybrid-q8_0-s1.gguf');
  });
});

describe('recurrent state (nemotron_h: Mamba-2 beside MLP-only and attention-only blocks)', () => {
  it('cpu: a snapshot written back resumes exactly; a slot copy carries the state', async () => {
    await checkRecurrentState(createCpuOps(), 0, 'nemotron_h-q8_0-s2.gguf');
  });
  it('wasm: the same', async () => {
    await checkRecurrentState(await createWasmOps({ threads: 1 }), 1e-4, 'nemotron_h-q8_0-s2.gguf');
  });
});

describe('recurrent state (falcon-h1: Mamba-2 beside attention in every layer, KV and state together)', () => {
  it('cpu: a snapshot written back resumes exactly; a slot copy carries the state', async () => {
    await checkRecurrentState(createCpuOps(), 0, 'falcon-h1-q8_0-s1.gguf');
  });
  it('wasm: the same', async () => {
    await checkRecurrentState(await createWasmOps({ threads: 1 }), 1e-4, 'falcon-h1-q8_0-s1.gguf');
  });
});

describe('recurrent state (nemotron_h_moe: Mamba-2 beside expert-only and attention-only blocks)', () => {
  it('cpu: a snapshot written back resumes exactly; a slot copy carries the state', async () => {
    await checkRecurrentState(createCpuOps(), 0, 'nemotron_h_moe-q8_0-s5.gguf');
  });
  it('wasm: the same', async () => {
    await checkRecurrentState(await createWasmOps({ threads: 1 }), 1e-4, 'nemotron_h_moe-q8_0-s5.gguf');
  });
});
