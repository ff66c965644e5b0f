/**
 * PromptCache: prefix reuse in place, prefix sharing by slot copy, key isolation, LRU eviction under a token
 * budget (partial eviction never matches beyond the kept KV), token confirmation and ref-counting.
 */
import { describe, expect, it } from 'vitest';
import { KvCache } from '../../../src/engine/kv-cache.js';
import { PromptCache } from '../../../src/engine/prompt-cache.js';

const K = PromptCache.keyString({ model: 'sha256:aa', template: 't1', tokenizer: 'bos' });
const range = (a: number, b: number) => Array.from({ length: b - a }, (_, i) => a + i);

function setup(nSlots = 2, ctx = 64, budget?: number) {
  const copies: [number, number, number][] = [];
  const kv = new KvCache(nSlots, ctx);
  const cache = new PromptCache(kv, (s, d, n) => copies.push([s, d, n]), budget);
  /** Acquire, "prefill" (append the uncached tail), release; returns the lease. */
  const turn = (key: string, prompt: number[], generated: number[] = []) => {
    const lease = cache.acquire(key, prompt);
    cache.append(lease, prompt.slice(lease.reused));
    if (generated.length) cache.append(lease, generated);
    cache.release(lease);
    return lease;
  };
  return { kv, cache, copies, turn };
}

describe('PromptCache', () => {
  it('the second turn of a conversation reuses the whole first turn in place', () => {
    const { cache, copies, turn, kv } = setup();
    const t1 = turn(K, range(0, 10), [50, 51, 52]);
    expect(t1.reused).toBe(0);
    const t2 = turn(K, [...range(0, 10), 50, 51, 52, 60, 61]);
    expect(t2.slot).toBe(t1.slot);
    expect(t2.reused).toBe(13);
    expect(copies).toEqual([]);
    expect(kv.slot(t2.slot).tokens).toEqual([...range(0, 10), 50, 51, 52, 60, 61]);
    const s = cache.stats();
    expect(s).toMatchObject({ lookups: 2, hits: 1, hitTokens: 13, reusedTokens: 13, copies: 0 });
  });

  it('two conversations sharing a system prompt share its KV by copying the prefix', () => {
    const { turn, copies, kv } = setup();
    const system = range(100, 120);
    const a = turn(K, [...system, 1, 2, 3]);
    const b = turn(K, [...system, 7, 8]);
    expect(b.slot).not.toBe(a.slot);
    expect(b.reused).toBe(20);
    expect(copies).toEqual([[a.slot, b.slot, 20]]);
    // A's KV is intact: its next turn still reuses all of it.
    expect(kv.slot(a.slot).tokens).toEqual([...system, 1, 2, 3]);
    const a2 = turn(K, [...system, 1, 2, 3, 4]);
    expect(a2.slot).toBe(a.slot);
    expect(a2.reused).toBe(23);
  });

  it("reuses in place when the owner's tail is worth less than the other slot's contents", () => {
    const { turn, copies, kv } = setup();
    const a = turn(K, range(0, 10), [90]); // A: 11 tokens
    const b = turn(K, range(300, 340)); // B: 40 unrelated tokens in the other slot
    const again = turn(K, [...range(0, 10), 55, 56]); // shares 10 with A; A's tail is 1 token
    expect(again.slot).toBe(a.slot);
    expect(again.reused).toBe(10);
    expect(copies).toEqual([]);
    expect(kv.slot(b.slot).tokens.length).toBe(40);
  });

  it('a different template or model never reuses', () => {
    const { turn } = setup();
    turn(K, range(0, 10));
    const otherTemplate = PromptCache.keyString({ model: 'sha256:aa', template: 't2', tokenizer: 'bos' });
    const otherModel = PromptCache.keyString({ model: 'sha256:bb', template: 't1', tokenizer: 'bos' });
    expect(turn(otherTemplate, range(0, 12)).reused).toBe(0);
    expect(turn(otherModel, range(0, 12)).reused).toBe(0);
  });

  it('always leaves at least one prompt token to evaluate', () => {
    const { turn } = setup();
    turn(K, range(0, 10));
    expect(turn(K, range(0, 10)).reused).toBe(9);
  });

  it('evicts LRU unused slots under the token budget, and a trimmed entry matches only what is kept', () => {
    const { turn, cache, kv } = setup(2, 64, 30);
    const a = turn(K, range(0, 20));
    const b = turn(K, range(200, 220)); // 40 tokens > 30: A (older) is trimmed to 10
    expect(b.slot).not.toBe(a.slot);
    expect(kv.slot(a.slot).tokens).toEqual(range(0, 10));
    expect(cache.stats()).toMatchObject({ evictions: 1, evictedTokens: 10 });
    const again = cache.lookup(K, range(0, 20));
    expect(again).toEqual({ slot: a.slot, matched: 10 });
  });

  it('never evicts a slot in use', () => {
    const { cache, kv } = setup(2, 64, 5);
    const lease = cache.acquire(K, range(0, 20));
    cache.append(lease, range(0, 20));
    cache.evictToBudget();
    expect(kv.slot(lease.slot).tokens.length).toBe(20);
    cache.release(lease);
    expect(kv.slot(lease.slot).tokens.length).toBe(5);
  });

  it('confirms a trie hit against the slot record (never trusts the index alone)', () => {
    const { turn, cache, kv } = setup();
    const a = turn(K, range(0, 10));
    // Simulate a record that disagrees with the trie: the hit must be refused.
    kv.set(a.slot, K, [99, ...range(1, 10)]);
    expect(cache.lookup(K, range(0, 10))).toBeNull();
  });

  it('an aborted prefill (no append) leaves only the reused prefix recorded', () => {
    const { cache, turn, kv } = setup();
    const a = turn(K, range(0, 10));
    const lease = cache.acquire(K, [...range(0, 10), 77, 78]);
    cache.release(lease); // aborted before append
    expect(kv.slot(a.slot).tokens).toEqual(range(0, 10));
    expect(cache.lookup(K, [...range(0, 10), 77, 78])?.matched).toBe(10);
  });

  it('clear forgets everything', () => {
    const { cache, turn, kv } = setup();
    turn(K, range(0, 10));
    cache.clear(true);
    expect(kv.totalTokens()).toBe(0);
    expect(cache.lookup(K, range(0, 10))).toBeNull();
    expect(cache.stats().lookups).toBe(0);
  });
});
