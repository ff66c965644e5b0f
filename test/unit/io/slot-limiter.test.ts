/** `SlotLimiter`: never more holders than slots, FIFO hand-over, idempotent release, aborted waiters leave the queue. */

import { describe, expect, it } from 'vitest';
import { LlmError } from '../../../src/errors.js';
import { SlotLimiter } from '../../../src/io/slot-limiter.js';

describe('SlotLimiter', () => {
  it('bounds concurrency and serves waiters in order', async () => {
    const limiter = new SlotLimiter(2);
    let active = 0;
    let peak = 0;
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const release = await limiter.acquire(undefined, 'test');
        order.push(i);
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 5));
        active--;
        release();
        release(); // idempotent
      }),
    );
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(limiter.inUse).toBe(0);
  });

  it('an aborted waiter rejects with aborted and does not take a slot', async () => {
    const limiter = new SlotLimiter(1);
    const release = await limiter.acquire(undefined, 'test');
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal, 'waiting read');
    controller.abort();
    await expect(waiting).rejects.toBeInstanceOf(LlmError);
    release();
    expect(limiter.inUse).toBe(0);
    expect(() => new SlotLimiter(0)).toThrow(LlmError);
  });
});
