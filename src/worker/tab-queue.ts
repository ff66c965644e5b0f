/**
 * `TabQueue`: one task runs at a time (a decode step needs the whole backend), and waiting tasks are served
 * round-robin between tabs — after a task of tab A, the next waiting task of the tab after A in turn — so one tab
 * queueing many requests cannot starve the others (a FIFO would make a tab wait behind every request queued before
 * its own). Within a tab, tasks keep their arrival order. A waiting task whose signal aborts leaves the queue; a tab
 * that goes away takes its waiting tasks with it.
 */

import { LlmError } from '../errors.js';

interface Waiter {
  readonly start: (release: () => void) => void;
  readonly fail: (e: unknown) => void;
}

/** Round-robin queue of tasks from several tabs (any string key: a tab, a port, a client). */
export class TabQueue {
  /** Waiting tasks per tab; the map's insertion order is the turn order. */
  private readonly tabs = new Map<string, Waiter[]>();
  private running: string | null = null;
  /** The tab whose task ran last: the search for the next task starts after it. */
  private lastServed: string | null = null;

  /** Tasks waiting (not counting the running one). */
  get pending(): number {
    let n = 0;
    for (const w of this.tabs.values()) n += w.length;
    return n;
  }

  /** Tasks of `tab` waiting. */
  pendingOf(tab: string): number {
    return this.tabs.get(tab)?.length ?? 0;
  }

  /** The tab whose task runs now, or null. */
  get busyWith(): string | null {
    return this.running;
  }

  /**
   * Waits for the turn of a task of `tab` and resolves with the function that ends it (call it exactly when the
   * task is over; later calls do nothing). Rejects with `aborted` when `signal` fires first, with `invalid-request`
   * when `tab` already has `maxPending` tasks waiting.
   */
  acquire(tab: string, signal?: AbortSignal, maxPending = 16): Promise<() => void> {
    if (signal?.aborted)
      return Promise.reject(new LlmError('aborted', 'request was aborted before it started', { cause: signal.reason }));
    if (!this.tabs.has(tab)) this.tabs.set(tab, []);
    const queue = this.tabs.get(tab)!;
    if (this.running === null && this.pending === 0) return Promise.resolve(this.begin(tab));
    if (queue.length >= maxPending) {
      return Promise.reject(
        new LlmError(
          'invalid-request',
          `too many concurrent requests from this tab: ${queue.length} already wait (maxQueue ${maxPending}); wait for one to finish or raise maxQueue`,
          {
            details: { field: 'maxQueue', maxQueue: maxPending },
          },
        ),
      );
    }
    return new Promise<() => void>((resolve, reject) => {
      const onAbort = (): void => {
        const i = queue.indexOf(waiter);
        if (i >= 0) queue.splice(i, 1);
        reject(new LlmError('aborted', 'request was aborted while queued', { cause: signal?.reason }));
      };
      const waiter: Waiter = {
        start: (release) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(release);
        },
        fail: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      queue.push(waiter);
    });
  }

  /** Rejects the waiting tasks of `tab` with `error` and forgets the tab (its running task, if any, still ends normally). */
  removeTab(tab: string, error: unknown): void {
    const queue = this.tabs.get(tab);
    this.tabs.delete(tab);
    if (this.lastServed === tab) this.lastServed = null;
    for (const w of queue?.splice(0) ?? []) w.fail(error);
  }

  /** Marks a task of `tab` running and returns its one-shot release. */
  private begin(tab: string): () => void {
    this.running = tab;
    this.lastServed = tab;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.running = null;
      this.next();
    };
  }

  /** Starts the first waiting task of the next tab in turn after the last one served. */
  private next(): void {
    const order = [...this.tabs.keys()];
    if (order.length === 0) return;
    const from = this.lastServed === null ? -1 : order.indexOf(this.lastServed);
    for (let k = 1; k <= order.length; k++) {
      const tab = order[(from + k + order.length) % order.length];
      const w = this.tabs.get(tab)!.shift();
      if (w) {
        w.start(this.begin(tab));
        return;
      }
    }
  }
}
