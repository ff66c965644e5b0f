/**
 * `createSharedWorkerEngine` without a browser: `SharedWorker` and `Worker` are stand-ins whose ports lead to a real
 * `SharedEngineHub` / `createWorkerApi` over a fake model (or to nothing, a hung worker). Checks that two engines
 * attach to one load through the client, the fallbacks to a dedicated worker (no SharedWorker; a shared worker that
 * does not answer) with their reason, and option checks.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Engine, EngineOptions } from '../../../src/api/engine.js';
import { isLlmError } from '../../../src/errors.js';
import { SharedEngineHub } from '../../../src/worker/shared-hub.js';
import { createSharedWorkerEngine } from '../../../src/worker/shared-client.js';
import { createWorkerApi } from '../../../src/worker/worker-api.js';
import { createFakeTransformer } from '../engine/fake-model.js';
import { createFakeEngine, fakeWorkerClass, useChannels } from './worker-harness.js';

const loads: string[] = [];
const factory = (o: EngineOptions): Promise<Engine> => {
  loads.push(String(o.model));
  return createFakeEngine(o.model, createFakeTransformer({ script: () => 97 }), 256, 1);
};

const channels = useChannels();
afterEach(() => {
  vi.unstubAllGlobals();
  loads.length = 0;
});

/** Stubs `SharedWorker`: every instance gets a port connected to `hub` (or to nothing when `hub` is null). */
function stubSharedWorker(hub: SharedEngineHub | null): void {
  class FakeSharedWorker extends EventTarget {
    readonly port: MessagePort;
    constructor() {
      super();
      const { port1, port2 } = channels.pair();
      if (hub) hub.connect(port1);
      this.port = port2;
    }
  }
  vi.stubGlobal('SharedWorker', FakeSharedWorker);
}

/** Stubs `Worker`: every instance runs `createWorkerApi(factory)` on the other end of a channel. */
function stubWorker(): { terminated: number } {
  const counts = { terminated: 0 };
  vi.stubGlobal(
    'Worker',
    fakeWorkerClass(
      () => channels.expose(createWorkerApi(factory)),
      () => counts.terminated++,
    ),
  );
  return counts;
}

const WORKER = 'http://127.0.0.1/webgguf/worker.js';
const text = async (engine: Engine) =>
  (await engine.completions.create({ prompt: 'x', max_tokens: 3, temperature: 0 })).choices[0].text;

describe('createSharedWorkerEngine', () => {
  it('two engines for the same model share one load in the shared worker', async () => {
    stubSharedWorker(new SharedEngineHub(factory, () => {}));
    const e1 = await createSharedWorkerEngine({ model: 'a.gguf', worker: WORKER });
    const e2 = await createSharedWorkerEngine({ model: 'a.gguf', worker: WORKER });
    expect(e1.sharing).toEqual({ mode: 'shared', attached: false });
    expect(e2.sharing).toEqual({ mode: 'shared', attached: true });
    expect(loads).toEqual(['a.gguf']);
    expect(await text(e1)).toBe('aaa');
    await e1.unload();
    expect(await text(e2)).toBe('aaa');
    expect((await e2.stats()).requests).toBe(2);
    await e2.unload();
    expect(isLlmError(await text(e2).catch((e: unknown) => e), 'invalid-request')).toBe(true);
  });

  it('falls back to a dedicated worker where there is no SharedWorker', async () => {
    vi.stubGlobal('SharedWorker', undefined);
    const counts = stubWorker();
    const e = await createSharedWorkerEngine({ model: 'a.gguf', worker: WORKER });
    expect(e.sharing).toEqual({ mode: 'dedicated', attached: false, reason: 'no-shared-worker' });
    expect(await text(e)).toBe('aaa');
    await e.unload();
    expect(counts.terminated).toBe(1);
  });

  it('falls back to a dedicated worker when the shared worker does not answer (hung in another tab)', async () => {
    stubSharedWorker(null);
    stubWorker();
    const t0 = Date.now();
    const e = await createSharedWorkerEngine({ model: 'a.gguf', worker: WORKER, connectTimeoutMs: 200 });
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(e.sharing).toEqual({ mode: 'dedicated', attached: false, reason: 'shared-worker-unresponsive' });
    expect(await text(e)).toBe('aaa');
    await e.unload();
  }, 5000);

  it('rejects bad options with invalid-request', async () => {
    stubSharedWorker(null);
    for (const o of [{ unloadTimeoutMs: -5 }, { connectTimeoutMs: Number.NaN }, { worker: 'http://[bad' }]) {
      const e = await createSharedWorkerEngine({ model: 'a.gguf', ...o }).catch((x: unknown) => x);
      expect(isLlmError(e, 'invalid-request'), JSON.stringify(o)).toBe(true);
    }
  });
});
