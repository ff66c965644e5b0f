/**
 * Bookkeeping of the KV cache's slots (sequences): which token ids each slot's cells 0…n−1 hold, who is using the
 * slot and when it was last used. The KV data itself lives on the backend (`Ops.createKvCache`); this is the
 * engine's only record of what it means, so every write to the backend's KV goes together with a call here.
 */

import { LlmError } from '../errors.js';

/** One sequence of the KV cache. */
export interface KvSlot {
  readonly index: number;
  /** Token ids whose KV is in cells 0 … tokens.length−1 (the slot's extent). */
  readonly tokens: readonly number[];
  /** Prompt-cache key the tokens were computed under ('' when empty). */
  readonly key: string;
  /** Requests currently using the slot (a used slot is never evicted or overwritten). */
  readonly refs: number;
  /** Monotonic use counter value of the last use (LRU order). */
  readonly lastUsed: number;
}

interface MutableSlot {
  index: number;
  tokens: number[];
  key: string;
  refs: number;
  lastUsed: number;
}

/** Slots of a KV cache of `nSlots` × `contextLength` cells. */
export class KvCache {
  readonly nSlots: number;
  readonly contextLength: number;
  private readonly slots: MutableSlot[];
  private clock = 0;

  constructor(nSlots: number, contextLength: number) {
    if (!Number.isInteger(nSlots) || nSlots < 1) {
      throw new LlmError('invalid-request', `KV cache: slots must be an integer ≥ 1, got ${nSlots}`, {
        details: { field: 'slots' },
      });
    }
    this.nSlots = nSlots;
    this.contextLength = contextLength;
    this.slots = Array.from({ length: nSlots }, (_, index) => ({ index, tokens: [], key: '', refs: 0, lastUsed: 0 }));
  }

  /** Read-only view of slot `i`. */
  slot(i: number): KvSlot {
    const s = this.slots[i];
    if (!s) throw new RangeError(`KV cache: slot ${i} does not exist (0…${this.nSlots - 1})`);
    return s;
  }

  /** All slots, in index order. */
  all(): readonly KvSlot[] {
    return this.slots;
  }

  /** Tokens held across every slot. */
  totalTokens(): number {
    let n = 0;
    for (const s of this.slots) n += s.tokens.length;
    return n;
  }

  /** Replaces slot `i`'s record (after a copy or a reset). */
  set(i: number, key: string, tokens: readonly number[]): void {
    if (tokens.length > this.contextLength) {
      throw new LlmError(
        'context-overflow',
        `KV cache: ${tokens.length} tokens exceed the context length ${this.contextLength}`,
      );
    }
    const s = this.mutable(i);
    s.key = tokens.length === 0 ? '' : key;
    s.tokens = tokens.slice();
  }

  /** Keeps only the first `n` cells of slot `i`. */
  truncate(i: number, n: number): void {
    const s = this.mutable(i);
    if (n < s.tokens.length) s.tokens.length = Math.max(0, n);
    if (s.tokens.length === 0) s.key = '';
  }

  /** Records that `tokens` were written at cells extent … of slot `i`. */
  append(i: number, key: string, tokens: readonly number[]): void {
    const s = this.mutable(i);
    if (s.tokens.length + tokens.length > this.contextLength) {
      throw new LlmError(
        'context-overflow',
        `KV cache: slot ${i} would hold ${s.tokens.length + tokens.length} tokens, over the context length ${this.contextLength}`,
      );
    }
    if (s.tokens.length === 0) s.key = key;
    for (const t of tokens) s.tokens.push(t);
  }

  /** Marks slot `i` as used by one more request. */
  ref(i: number): void {
    const s = this.mutable(i);
    s.refs++;
    s.lastUsed = ++this.clock;
  }

  /** Ends one request's use of slot `i`. */
  unref(i: number): void {
    const s = this.mutable(i);
    if (s.refs === 0) throw new Error(`KV cache: slot ${i} released more often than acquired`);
    s.refs--;
    s.lastUsed = ++this.clock;
  }

  /** Forgets every slot's contents (the backend data becomes garbage that no one reads). */
  clear(): void {
    for (const s of this.slots) {
      s.tokens = [];
      s.key = '';
      s.lastUsed = 0;
    }
  }

  private mutable(i: number): MutableSlot {
    const s = this.slots[i];
    if (!s) throw new RangeError(`KV cache: slot ${i} does not exist (0…${this.nSlots - 1})`);
    return s;
  }
}
