/**
 * The worker client's unload deadline (issue #21): a worker that does not answer `unload()` (a hung template render
 * or kernel) no longer makes `unload()` wait forever — it resolves after `unloadTimeoutMs` and the worker is
 * terminated. The "worker" is a Comlink API on a MessageChannel whose `load` answers and whose `unload` never does.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EngineInfo } from '../../../src/api/engine.js';
import { isLlmError } from '../../../src/errors.js';
import { connectWorkerEngine, createWorkerEngine } from '../../../src/worker/client.js';
import type { WorkerEngineApi } from '../../../src/worker/worker-api.js';
import { fakeWorkerClass, useChannels } from './worker-harness.js';

const INFO: EngineInfo = {
  model: {
    name: 'hung',
    arch: 'llama',
    identity: 'fake:hung',
    vocabSize: 4,
    trainContextLength: 8,
    parameterCount: 0,
    quantization: 'F32',
  },
  backend: { name: 'fake', description: 'fake', reason: 'requested' },
  contextLength: 8,
  slots: 1,
  ubatchSize: 8,
  chatTemplateHash: '0',
};

/** A worker API that loads but never answers `unload`. */
function hungApi(): WorkerEngineApi {
  const never = () => new Promise<never>(() => {});
  return {
    load: async () => INFO,
    chat: never,
    completion: never,
    tokenize: never,
    detokenize: never,
    stats: never,
    unload: never,
  };
}

const channels = useChannels();
afterEach(() => {
  vi.unstubAllGlobals();
});

/** The client's end of a channel to a new hung API. */
const channel = (): MessagePort => channels.expose(hungApi());

describe('worker unload deadline', () => {
  it('unload() resolves after unloadTimeoutMs when the worker does not answer, and reports it unanswered', async () => {
    const onUnload = vi.fn();
    const engine = await connectWorkerEngine(channel(), { model: 'm.gguf', unloadTimeoutMs: 150 }, onUnload);
    const t0 = Date.now();
    await engine.unload();
    const waited = Date.now() - t0;
    expect(waited).toBeGreaterThanOrEqual(100);
    expect(waited).toBeLessThan(3000);
    expect(onUnload).toHaveBeenCalledWith(false);
    // Idempotent: the same settled promise.
    await engine.unload();
    expect(onUnload).toHaveBeenCalledTimes(1);
  }, 5000);

  it('createWorkerEngine terminates a worker that does not answer unload()', async () => {
    const terminate = vi.fn();
    // A stand-in for the Worker global: its messages go to the hung API.
    vi.stubGlobal('Worker', fakeWorkerClass(channel, terminate));
    const engine = await createWorkerEngine({ model: 'm.gguf', worker: 'hung-worker.js', unloadTimeoutMs: 100 });
    await engine.unload();
    expect(terminate).toHaveBeenCalledTimes(1);
  }, 5000);

  it('rejects a bad unloadTimeoutMs with invalid-request', async () => {
    const e = await connectWorkerEngine(channel(), { model: 'm.gguf', unloadTimeoutMs: -1 }).catch((x: unknown) => x);
    expect(isLlmError(e, 'invalid-request')).toBe(true);
  });
});
