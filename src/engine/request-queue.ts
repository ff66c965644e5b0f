/**
 * FIFO queue of requests: one runs at a time (a decode step needs the whole backend), the rest wait in arrival
 * order up to a configurable maximum, beyond which a request fails at once with a clear error. A waiting request
 * whose signal aborts leaves the queue without running.
 */

import { LlmError } from '../errors.js';

interface Waiter {
  start: () => void;
  fail: (e: unknown) => void;
}

/** Serialises async tasks in arrival order. */
export class RequestQueue {
  /** Most tasks that may wait behind the running one. */
  readonly maxPending: number;
  private readonly waiting: Waiter[] = [];
  private running = false;
  private idleWaiters: (() => void)[] = [];

  constructor(maxPending = 16) {
    if (!Number.isInteger(maxPending) || maxPending < 0) {
      throw new LlmError('invalid-request', `request queue: maxQueue must be an integer ≥ 0, got ${maxPending}`, {
        details: { field: 'maxQueue' },
      });
    }
    this.maxPending = maxPending;
  }

  /** Tasks waiting (not counting the running one). */
  get pending(): number {
    return this.waiting.length;
  }

  /** True while a task runs. */
  get busy(): boolean {
    return this.running;
  }

  /** Throws the queue-full error now if a new request could not be queued. */
  checkCapacity(): void {
    if ((this.running || this.waiting.length > 0) && this.waiting.length >= this.maxPending) {
      throw this.fullError();
    }
  }

  /**
   * Runs `task` after every task queued before it. Rejects with `invalid-request` when the queue is full and with
   * `aborted` when `signal` fires before the task starts.
   */
  async run<T>(task: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted)
      throw new LlmError('aborted', 'request was aborted before it started', { cause: signal.reason });
    if (this.running || this.waiting.length > 0) {
      if (this.waiting.length >= this.maxPending) throw this.fullError();
      await new Promise<void>((resolve, reject) => {
        const waiter: Waiter = {
          start: () => {
            signal?.removeEventListener('abort', onAbort);
            resolve();
          },
          fail: (e) => {
            signal?.removeEventListener('abort', onAbort);
            reject(e);
          },
        };
        const onAbort = (): void => {
          const i = this.waiting.indexOf(waiter);
          if (i >= 0) this.waiting.splice(i, 1);
          waiter.fail(new LlmError('aborted', 'request was aborted while queued', { cause: signal?.reason }));
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(waiter);
      });
    } else {
      this.running = true;
    }
    try {
      return await task();
    } finally {
      this.next();
    }
  }

  /** Rejects every waiting task with `error` (the running one is left to finish). */
  rejectPending(error: unknown): void {
    for (const w of this.waiting.splice(0)) w.fail(error);
  }

  /** Resolves once no task is running or waiting. */
  idle(): Promise<void> {
    if (!this.running && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private fullError(): LlmError {
    return new LlmError(
      'invalid-request',
      `too many concurrent requests: ${this.waiting.length} already wait behind the running one (maxQueue ${this.maxPending}); wait for one to finish or raise maxQueue`,
      {
        details: { field: 'maxQueue', maxQueue: this.maxPending },
      },
    );
  }

  /** Hands the backend to the next waiter, or goes idle. */
  private next(): void {
    const w = this.waiting.shift();
    if (w) {
      w.start();
      return;
    }
    this.running = false;
    for (const r of this.idleWaiters.splice(0)) r();
  }
}
