/**
 * The memory plan before download: stories260K served over HTTP (fault server) into the IndexedDB model store
 * (fake-indexeddb), loaded on WebGPU (Dawn on lavapipe) under a GPU memory budget that cannot hold it. An explicit
 * 'webgpu' load fails with out-of-memory and a suggested context after reading only the header; 'auto' falls back to
 * WASM with the reason; without the budget the model loads and runs.
 */
import 'fake-indexeddb/auto';
import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { activationBytes } from '../../../src/model/run-shape.js';
import { planMemory } from '../../../src/backend/webgpu/memory-plan.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { readManifest } from '../../../src/io/model-store.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { readModelConfig } from '../../../src/model/load.js';
import { describeLayers, kvLayersOf } from '../../../src/model/layer-spec.js';
import { type FaultServer, startFaultServer } from '../../helpers/fault-server.js';
import { llmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');
const PATH = '/models/stories260K.gguf';
const CONTEXT = 512;
const SLOTS = 2;

async function nodeGpu(): Promise<GPU> {
  process.env.VK_ICD_FILENAMES ??= '/usr/share/vulkan/icd.d/lvp_icd.json';
  const { create, globals } = (await import('webgpu')) as unknown as { create(flags: string[]): GPU; globals: object };
  Object.assign(globalThis, globals);
  return create([]);
}

/** A budget that holds the weights, the activations and 64 positions of f32 KV, but not 512. */
async function tightBudget(): Promise<number> {
  const source = await NodeFileSource.open(MODEL);
  try {
    const gguf = await parseGguf(source);
    const c = readModelConfig(gguf);
    const activations = activationBytes(c, { contextLength: CONTEXT, ubatchSize: CONTEXT });
    const base = {
      tensors: gguf.tensors,
      kvLayers: kvLayersOf(describeLayers(c)),
      nSlots: SLOTS,
      activationBytes: activations,
    };
    const plan = planMemory(
      { ...base, contextLength: 64, kvBytesPerElement: 4 },
      { maxStorageBufferBindingSize: 2 ** 31, maxBufferSize: 2 ** 31 },
    );
    return plan.totalBytes;
  } finally {
    await source.close();
  }
}

describe('memory plan before download', () => {
  let server: FaultServer;
  let gpu: GPU;
  let budget: number;
  let suggested = 0;
  const size = statSync(MODEL).size;

  beforeAll(async () => {
    server = await startFaultServer();
    gpu = await nodeGpu();
    budget = await tightBudget();
  });
  afterAll(async () => {
    await server.close();
  });

  it("explicit 'webgpu': out-of-memory with the numbers and a context suggestion, after reading the header only", async () => {
    server.clearLog();
    const url = server.url(PATH);
    const err = await llmError(
      createEngine({
        model: url,
        backend: 'webgpu',
        gpu,
        contextLength: CONTEXT,
        slots: SLOTS,
        gpuMemoryBudget: budget,
        warmup: false,
      }),
    );
    expect(err.code).toBe('out-of-memory');
    expect(err.message).toMatch(
      /weights .* MiB \+ KV cache .* MiB \+ activations .* MiB = .* MiB, over the budget of .* MiB; use a context length of at most \d+/,
    );
    const details = err.details as Record<string, number>;
    expect(details.contextLength).toBe(CONTEXT);
    expect(details.maxContextLength).toBeGreaterThanOrEqual(64);
    expect(details.maxContextLength).toBeLessThan(CONTEXT);
    expect(details.totalBytes).toBeGreaterThan(budget);
    suggested = details.maxContextLength;
    // No download: every request was a range request, together far below the file, and nothing was stored.
    const reqs = server.requestsFor(PATH);
    expect(reqs.length).toBeGreaterThan(0);
    for (const r of reqs) expect(r.range).toMatch(/^bytes=\d+-\d+$/);
    const sent = reqs.reduce((a, r) => a + r.bytesSent, 0);
    expect(sent).toBeLessThan(size / 2);
    expect(await readManifest(url)).toBeUndefined();
  });

  it("'auto': the plan that does not fit falls back to WASM with the reason", async () => {
    const engine = await createEngine({
      model: server.url(PATH),
      backend: 'auto',
      gpu,
      contextLength: CONTEXT,
      slots: SLOTS,
      gpuMemoryBudget: budget,
      warmup: false,
    });
    try {
      expect(engine.info.backend.name).toBe('wasm');
      expect(engine.info.backend.reason).toMatch(
        /auto: the WebGPU memory plan does not fit \(.*over the budget.*context length of at most \d+/,
      );
      const out = await engine.completions.create({ prompt: 'Once upon a time', temperature: 0, max_tokens: 4 });
      expect(out.choices[0].text.length).toBeGreaterThan(0);
    } finally {
      await engine.unload();
    }
    expect((await readManifest(server.url(PATH)))?.complete).toBe(true);
  });

  it('a cached model is planned after parsing; the suggested context fits; without a budget WebGPU loads and runs', async () => {
    server.clearLog();
    const tight = await llmError(
      createEngine({
        model: server.url(PATH),
        backend: 'webgpu',
        gpu,
        contextLength: CONTEXT,
        slots: SLOTS,
        gpuMemoryBudget: budget,
        warmup: false,
      }),
    );
    expect(tight.code).toBe('out-of-memory');
    // The suggested context fits the same budget.
    const fits = await createEngine({
      model: server.url(PATH),
      backend: 'webgpu',
      gpu,
      contextLength: suggested,
      slots: SLOTS,
      gpuMemoryBudget: budget,
      warmup: false,
    });
    expect(fits.info.backend.name).toBe('webgpu');
    await fits.unload();
    const engine = await createEngine({
      model: server.url(PATH),
      backend: 'webgpu',
      gpu,
      contextLength: CONTEXT,
      slots: SLOTS,
      warmup: false,
    });
    try {
      expect(engine.info.backend.name).toBe('webgpu');
      const out = await engine.completions.create({ prompt: 'Once upon a time', temperature: 0, max_tokens: 4 });
      expect(out.choices[0].text.length).toBeGreaterThan(0);
    } finally {
      await engine.unload();
    }
    expect(server.requestsFor(PATH).length).toBe(0); // served from the store
  });

  it("rejects a 'gpuMemoryBudget' that is not a positive number", async () => {
    expect((await llmError(createEngine({ model: MODEL, backend: 'cpu', gpuMemoryBudget: -1 }))).code).toBe(
      'invalid-request',
    );
  });
});
