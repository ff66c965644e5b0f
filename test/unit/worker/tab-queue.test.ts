/**
 * TabQueue: one task at a time, waiting tasks served round-robin between tabs (not FIFO), abort and removal of a
 * tab's waiting tasks, and the per-tab limit.
 */
import { describe, expect, it } from 'vitest';
import { isLlmError } from '../../../src/errors.js';
import { TabQueue } from '../../../src/worker/tab-queue.js';

/** Queues `tab`'s task `name`; it records its start and holds its turn until `done[name]()` is called. */
function harness() {
  const q = new TabQueue();
  const started: string[] = [];
  const done: Record<string, () => void> = {};
  const add = (tab: string, name: string, signal?: AbortSignal) =>
    q.acquire(tab, signal).then((release) => {
      started.push(name);
      done[name] = release;
    });
  return { q, started, done, add };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('TabQueue', () => {
  it('serves waiting tasks round-robin between tabs, in order within a tab', async () => {
    const { started, done, add } = harness();
    void add('A', 'a1');
    void add('A', 'a2');
    void add('A', 'a3');
    void add('A', 'a4');
    void add('B', 'b1');
    void add('B', 'b2');
    void add('C', 'c1');
    await tick();
    for (const next of ['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']) {
      expect(started.at(-1)).toBe(next);
      done[next]();
      await tick();
    }
    // FIFO would have run a1 a2 a3 a4 b1 b2 c1.
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
  });

  it('a release runs once; the queue goes idle and restarts at once', async () => {
    const { q, started, done, add } = harness();
    await add('A', 'a1');
    done.a1();
    done.a1();
    expect(q.busyWith).toBe(null);
    await add('B', 'b1');
    expect(started).toEqual(['a1', 'b1']);
    expect(q.busyWith).toBe('B');
  });

  it('an aborted waiting task leaves the queue with aborted; removing a tab rejects only its tasks', async () => {
    const { q, started, done, add } = harness();
    void add('A', 'a1');
    const ac = new AbortController();
    const a2 = add('A', 'a2', ac.signal).catch((e: unknown) => e);
    const b1 = add('B', 'b1').catch((e: unknown) => e);
    const c1 = add('C', 'c1');
    await tick();
    ac.abort();
    expect(isLlmError(await a2, 'aborted')).toBe(true);
    q.removeTab('B', new Error('tab B is gone'));
    expect(String(await b1)).toContain('tab B is gone');
    expect(q.pending).toBe(1);
    done.a1();
    await c1;
    expect(started).toEqual(['a1', 'c1']);
    const pre = new AbortController();
    pre.abort();
    expect(isLlmError(await q.acquire('D', pre.signal).catch((e: unknown) => e), 'aborted')).toBe(true);
  });

  it('a tab beyond its limit of waiting tasks is refused with invalid-request', async () => {
    const q = new TabQueue();
    await q.acquire('A');
    void q.acquire('A', undefined, 1);
    const e = await q.acquire('A', undefined, 1).catch((x: unknown) => x);
    expect(isLlmError(e, 'invalid-request')).toBe(true);
    // Another tab still gets in.
    expect(q.acquire('B', undefined, 1)).toBeInstanceOf(Promise);
    expect(q.pendingOf('B')).toBe(1);
  });
});
