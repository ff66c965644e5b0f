/**
 * The shared worker's hub without a browser: each "tab" connects on its own MessageChannel exactly as through a
 * SharedWorker port, over a fake model. Checks that a second tab attaches instead of loading again (also while the
 * first load runs, with its progress), that other options load a separate engine, round-robin between tabs, that a
 * tab going away (its Web Lock released — here a fake watcher) ends only its own requests, errors keep their code,
 * and the engine is unloaded with its last tab.
 */
import * as Comlink from 'comlink';
import { describe, expect, it } from 'vitest';
import type { Engine, EngineOptions, LoadProgress } from '../../../src/api/engine.js';
import { isLlmError, LlmError } from '../../../src/errors.js';
import { RemoteEngine } from '../../../src/worker/remote-engine.js';
import { type SharedEngineApi, SharedEngineHub, loadKeyOf } from '../../../src/worker/shared-hub.js';
import { createFakeTransformer } from '../engine/fake-model.js';
import { createFakeEngine, useChannels } from './worker-harness.js';

const channels = useChannels();

/** A hub over fake models (each token takes `delayMs`), its load held until `release()` when `gate` is set. */
function setup(delayMs = 1, gate = false, fail = false, hangUnload = false) {
  const loads: string[] = [];
  const destroyed: string[] = [];
  let open: () => void = () => {};
  const opened = gate ? new Promise<void>((r) => (open = r)) : Promise.resolve();
  const factory = async (o: EngineOptions): Promise<Engine> => {
    loads.push(String(o.model));
    o.onProgress?.({ phase: 'download', loadedBytes: 1, totalBytes: 2 });
    await new Promise<void>((resolve, reject) => {
      void opened.then(resolve);
      o.signal?.addEventListener('abort', () => reject(new LlmError('aborted', 'load aborted')), { once: true });
    });
    if (fail) throw new LlmError('gguf-invalid', 'not a GGUF', { details: { key: 'magic' } });
    o.onProgress?.({ phase: 'ready', loadedBytes: 2, totalBytes: 2 });
    const transformer = createFakeTransformer({ script: () => 97, delayMs });
    const destroy = transformer.destroy.bind(transformer);
    transformer.destroy = () => {
      destroyed.push(String(o.model));
      destroy();
    };
    const engine = await createFakeEngine(o.model, transformer, 4096, 2);
    if (hangUnload) engine.unload = () => new Promise<void>(() => {});
    return engine;
  };
  const gone = new Map<string, () => void>();
  const hub = new SharedEngineHub(factory, (lock, onGone) => gone.set(lock, onGone));
  let tabs = 0;
  /** Opens a "tab": a port to the hub, then loads `model` like createSharedWorkerEngine does. */
  const tab = async (
    model = 'a.gguf',
    extra: Omit<Partial<EngineOptions>, 'model' | 'mmproj'> = {},
    signal?: AbortSignal,
  ) => {
    const { port1, port2 } = channels.pair();
    hub.connect(port1);
    const remote = Comlink.wrap<SharedEngineApi>(port2);
    const lock = `tab-${++tabs}`;
    await remote.hello(lock);
    const progress: LoadProgress[] = [];
    const info = await remote.load(
      { model, ...extra },
      Comlink.proxy((p: LoadProgress) => void progress.push(p)),
      signal,
    );
    const sharing = await remote.sharing();
    const engine = new RemoteEngine(remote, info, () => port2.close(), 300);
    return { engine, sharing, progress, die: () => gone.get(lock)?.(), bye: () => remote.bye() };
  };
  return { hub, loads, destroyed, tab, release: () => open() };
}

const ask = (engine: Engine, n: number, signal?: AbortSignal) =>
  engine.completions.create({ prompt: 'x', max_tokens: n, temperature: 0, signal }).then((r) => r.choices[0].text);

describe('shared engine hub', () => {
  it('a second tab with the same model and options attaches to the loaded engine; others load their own', async () => {
    const { hub, loads, destroyed, tab } = setup();
    const t1 = await tab();
    const t2 = await tab();
    expect(loads).toEqual(['a.gguf']);
    expect(t1.sharing).toMatchObject({ attached: false, handles: 1 });
    expect(t2.sharing).toMatchObject({ attached: true, handles: 2, engines: 1 });
    expect(t2.progress.map((p) => p.phase)).toEqual(['ready']);
    expect(t2.engine.info.model.identity).toBe('fake:a.gguf');
    const t3 = await tab('a.gguf', { contextLength: 64 });
    const t4 = await tab('b.gguf');
    expect(loads).toEqual(['a.gguf', 'a.gguf', 'b.gguf']);
    expect(t3.sharing.attached).toBe(false);
    expect(hub.engines).toBe(3);
    // Both tabs of the shared engine use it; unloading the first leaves it loaded for the second.
    expect(await ask(t1.engine, 3)).toBe('aaa');
    await t1.engine.unload();
    expect(destroyed).toEqual([]);
    expect(await ask(t2.engine, 2)).toBe('aa');
    const e = await ask(t1.engine, 2).catch((x: unknown) => x);
    expect(isLlmError(e)).toBe(true);
    await t2.engine.unload();
    expect(destroyed).toEqual(['a.gguf']);
    await t3.engine.unload();
    await t4.engine.unload();
    expect(hub.engines).toBe(0);
  });

  it('a tab attaching while the first load runs waits for that load and gets its progress', async () => {
    const { loads, tab, release } = setup(1, true);
    const p1 = tab();
    await new Promise((r) => setTimeout(r, 20));
    const p2 = tab();
    await new Promise((r) => setTimeout(r, 20));
    release();
    const [t1, t2] = await Promise.all([p1, p2]);
    expect(loads).toEqual(['a.gguf']);
    expect(t1.progress.map((p) => p.phase)).toEqual(['download', 'ready']);
    // The latest event so far replayed on attach, then the rest.
    expect(t2.progress.map((p) => p.phase)).toEqual(['download', 'ready']);
    expect(t2.sharing.attached).toBe(true);
  });

  it('requests of tabs take turns round-robin, not first-come-first-served', async () => {
    const { tab } = setup(2);
    const t1 = await tab();
    const t2 = await tab();
    const order: string[] = [];
    const run = (name: string, engine: Engine) => ask(engine, 5).then(() => order.push(name));
    const all = [run('a1', t1.engine), run('a2', t1.engine), run('a3', t1.engine)];
    await new Promise((r) => setTimeout(r, 5));
    all.push(run('b1', t2.engine));
    await Promise.all(all);
    expect(order).toEqual(['a1', 'b1', 'a2', 'a3']);
  });

  it('a tab that dies mid-generation loses only its own requests; the others finish and the engine stays', async () => {
    const { destroyed, tab } = setup(2);
    const t1 = await tab();
    const t2 = await tab();
    const stream = await t1.engine.completions.create({ prompt: 'x', max_tokens: 2000, temperature: 0, stream: true });
    const reading = (async () => {
      try {
        for await (const _ of stream) {
          // drain until the stream ends or is aborted
        }
        return 'ended';
      } catch (e) {
        return isLlmError(e, 'aborted') ? 'aborted' : String(e);
      }
    })();
    const queued1 = ask(t1.engine, 3).catch((e: unknown) => (isLlmError(e, 'aborted') ? 'aborted' : String(e)));
    const other = ask(t2.engine, 4);
    await new Promise((r) => setTimeout(r, 30));
    t1.die();
    expect(await other).toBe('aaaa');
    expect(await queued1).toBe('aborted');
    expect(['aborted', 'ended']).toContain(await reading);
    expect(destroyed).toEqual([]);
    expect(await ask(t2.engine, 1)).toBe('a');
  });

  it('an abort in one tab does not touch the other; errors keep their code', async () => {
    const { tab } = setup(2);
    const t1 = await tab();
    const t2 = await tab();
    const ac = new AbortController();
    const aborted = ask(t1.engine, 500, ac.signal).catch((e: unknown) => e);
    const fine = ask(t2.engine, 6);
    setTimeout(() => ac.abort(), 20);
    expect(isLlmError(await aborted, 'aborted')).toBe(true);
    expect(await fine).toBe('aaaaaa');
    const bad = await t2.engine.completions.create({ prompt: 'x', temperature: -1 }).catch((e: unknown) => e);
    expect(bad).toMatchObject({ code: 'invalid-request', details: { field: 'temperature' } });
    // A stream the reader closes early frees the engine for the next request.
    const s = await t1.engine.completions.create({ prompt: 'x', max_tokens: 1000, temperature: 0, stream: true });
    for await (const _ of s) break;
    expect(await ask(t2.engine, 2)).toBe('aa');
  });

  it('keys: a URL by its text, options in any order, maxQueue ignored, bare Blobs never shared', () => {
    expect(loadKeyOf({ model: 'u', contextLength: 5, backend: 'wasm' })).toBe(
      loadKeyOf({ model: 'u', backend: 'wasm', contextLength: 5, maxQueue: 3 }),
    );
    expect(loadKeyOf({ model: 'u' })).not.toBe(loadKeyOf({ model: 'v' }));
    const blob = new Blob(['x']);
    expect(loadKeyOf({ model: blob })).not.toBe(loadKeyOf({ model: blob }));
  });

  it('a tab giving up a shared load leaves it to the others; the last one giving up stops it', async () => {
    const { hub, loads, tab, release } = setup(1, true);
    const ac1 = new AbortController();
    const p1 = tab('a.gguf', {}, ac1.signal).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    const p2 = tab();
    await new Promise((r) => setTimeout(r, 20));
    ac1.abort();
    expect(isLlmError(await p1, 'aborted')).toBe(true);
    release();
    const t2 = await p2;
    expect(await ask(t2.engine, 2)).toBe('aa');
    expect(loads).toEqual(['a.gguf']);
    expect(hub.engines).toBe(1);
    // Alone, an aborted load is stopped (the loader sees its signal abort) and forgotten.
    const other = setup(1, true);
    const ac3 = new AbortController();
    const p3 = other.tab('c.gguf', {}, ac3.signal).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    expect(other.hub.engines).toBe(1);
    ac3.abort();
    expect(isLlmError(await p3, 'aborted')).toBe(true);
    await new Promise((r) => setTimeout(r, 20));
    expect(other.hub.engines).toBe(0);
  });

  it('a failed load fails every tab waiting for it with its code, and a later load tries again', async () => {
    const { hub, loads, tab, release } = setup(1, true, true);
    const p1 = tab().catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    const p2 = tab().catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    release();
    for (const e of [await p1, await p2]) expect(e).toMatchObject({ code: 'gguf-invalid', details: { key: 'magic' } });
    expect(hub.engines).toBe(0);
    expect(isLlmError(await tab().catch((e: unknown) => e), 'gguf-invalid')).toBe(true);
    expect(loads).toEqual(['a.gguf', 'a.gguf']);
  });

  it('unload() returns after its deadline even when the shared worker never finishes unloading', async () => {
    const { tab } = setup(1, false, false, true);
    const t1 = await tab();
    const t0 = Date.now();
    await t1.engine.unload();
    expect(Date.now() - t0).toBeLessThan(3000);
  }, 5000);

  it('a page sending bye (pagehide) is dropped like a dead one', async () => {
    const { destroyed, tab } = setup(2);
    const t1 = await tab();
    const t2 = await tab();
    const running = ask(t1.engine, 3000).catch((e: unknown) => (isLlmError(e, 'aborted') ? 'aborted' : String(e)));
    const other = ask(t2.engine, 3);
    await new Promise((r) => setTimeout(r, 20));
    await t1.bye();
    expect(await running).toBe('aborted');
    expect(await other).toBe('aaa');
    expect(destroyed).toEqual([]);
    await t2.engine.unload();
    expect(destroyed).toEqual(['a.gguf']);
  });
});
