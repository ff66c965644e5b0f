/** RequestQueue: FIFO order, one at a time, a maximum of waiters, aborting while queued. */
import { describe, expect, it } from 'vitest';
import { RequestQueue } from '../../../src/engine/request-queue.js';
import { isLlmError } from '../../../src/errors.js';

const tick = (ms = 1) => new Promise((r) => setTimeout(r, ms));

describe('RequestQueue', () => {
  it('runs tasks one at a time in arrival order', async () => {
    const q = new RequestQueue(8);
    const log: string[] = [];
    let running = 0;
    const task = (name: string) => async () => {
      running++;
      expect(running).toBe(1);
      log.push(`start ${name}`);
      await tick(2);
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const results = await Promise.all(['a', 'b', 'c'].map((n) => q.run(task(n))));
    expect(results).toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('refuses beyond maxPending with invalid-request', async () => {
    const q = new RequestQueue(1);
    const slow = q.run(() => tick(5));
    const waiting = q.run(() => tick(1));
    await expect(q.run(() => tick(1))).rejects.toSatisfy(
      (e) => isLlmError(e, 'invalid-request') && /maxQueue 1/.test((e as Error).message),
    );
    expect(() => q.checkCapacity()).toThrow(/too many concurrent requests/);
    await Promise.all([slow, waiting]);
    await q.run(() => tick(1));
  });

  it('an aborted waiter leaves the queue without running', async () => {
    const q = new RequestQueue(4);
    const ac = new AbortController();
    let ran = false;
    const first = q.run(() => tick(5));
    const second = q.run(async () => {
      ran = true;
    }, ac.signal);
    ac.abort();
    await expect(second).rejects.toSatisfy((e) => isLlmError(e, 'aborted'));
    await first;
    await q.idle();
    expect(ran).toBe(false);
    expect(q.busy).toBe(false);
  });
});
