/**
 * The prompt cache: a trie over token ids, one per cache key (model identity + chat template hash + tokenizer
 * flags), whose nodes know which slots hold KV for the prefix they spell. A request leases a slot whose KV already
 * covers the longest cached prefix of its prompt (copying that prefix into another slot when the owner's tail is
 * worth more than that slot's contents); unused slots are trimmed LRU under a token budget.
 *
 * Models with recurrent layers (lfm2's short convolutions) also keep a state per slot that describes the sequence
 * after its last evaluated token and cannot be cut back to a prefix. For them a match only lands where a state is
 * known: the slot's own state when it was completely written at that position (`stateAt`), or a snapshot taken
 * there (end of each prompt, and the point where a prompt left a cached prefix); snapshots are kept LRU under a
 * count budget. A slot being written has no known state until its record says what was written.
 */

import type { KvCache } from './kv-cache.js';

/** What makes cached KV valid for a request: never compared by hash alone (tokens are compared too). */
export interface CacheKey {
  /** Model identity: sha256, or etag + size, or file name + size. */
  readonly model: string;
  /** Hash of the chat template text ('' for raw completions). */
  readonly template: string;
  /** Tokenizer flags that change the ids (add_bos, parse_special …). */
  readonly tokenizer: string;
}

/** Counters of the prompt cache (cumulative since load). */
export interface PromptCacheStats {
  /** Lookups made (one per request). */
  lookups: number;
  /** Lookups that found a cached prefix of at least one token. */
  hits: number;
  /** Sum of the matched prefix lengths. */
  hitTokens: number;
  /** Prompt tokens whose KV was reused instead of recomputed (in place or copied). */
  reusedTokens: number;
  /** Slot-to-slot KV copies made to share a prefix. */
  copies: number;
  /** Eviction events (a slot trimmed or emptied to stay under the budget). */
  evictions: number;
  /** Tokens evicted. */
  evictedTokens: number;
  /** Recurrent-state snapshots taken (models with recurrent layers only). */
  stateSnapshots: number;
  /** Matches served from a snapshot rather than a slot's own state. */
  snapshotRestores: number;
}

/** A model's recurrent state, for the prompt cache (null for models without one). */
export interface RecurrentStateAccess {
  /** The state of `slot` after its last evaluated token. */
  read(slot: number): Promise<Float32Array | null>;
  /** Replaces the state of `slot`. */
  write(slot: number, state: Float32Array): void;
}

/** The recurrent state after `tokens` (under `key`). */
interface StateSnapshot {
  readonly key: string;
  readonly tokens: readonly number[];
  readonly state: Float32Array;
  lastUsed: number;
}

/** A request's hold on one slot. */
export interface SlotLease {
  readonly slot: number;
  readonly key: string;
  /** Prompt tokens whose KV is already in the slot: prefill starts at this position. */
  readonly reused: number;
}

interface TrieNode {
  readonly children: Map<number, TrieNode>;
  /** Slots whose cells 0 … depth−1 hold this node's prefix. */
  readonly slots: Set<number>;
  readonly parent: TrieNode | null;
  readonly token: number;
}

/** Copies the first n positions of KV from one slot to another on the backend. */
export type CopySlotFn = (src: number, dst: number, n: number) => void;

/** Trie of cached prefixes over a `KvCache`. */
export class PromptCache {
  readonly kv: KvCache;
  /** Most tokens kept across all unused slots. */
  readonly tokenBudget: number;
  private readonly copySlot: CopySlotFn;
  private readonly roots = new Map<string, TrieNode>();
  /** Per slot, the trie nodes of its tokens (paths[s][i] spells tokens 0…i). */
  private readonly paths: TrieNode[][];
  private readonly counters: PromptCacheStats = {
    lookups: 0,
    hits: 0,
    hitTokens: 0,
    reusedTokens: 0,
    copies: 0,
    evictions: 0,
    evictedTokens: 0,
    stateSnapshots: 0,
    snapshotRestores: 0,
  };
  private readonly states: RecurrentStateAccess | null;
  /** Per slot, the position its recurrent state describes; −1 while unknown (being written, or cut back). */
  private readonly stateAt: number[];
  private readonly snapshots: StateSnapshot[] = [];
  /** Most snapshots kept (LRU). */
  private readonly snapshotBudget: number;
  private snapshotClock = 0;

  constructor(
    kv: KvCache,
    copySlot: CopySlotFn,
    tokenBudget = kv.nSlots * kv.contextLength,
    states: RecurrentStateAccess | null = null,
    snapshotBudget = 4 * kv.nSlots + 4,
  ) {
    this.kv = kv;
    this.copySlot = copySlot;
    this.tokenBudget = Math.max(0, tokenBudget);
    this.paths = Array.from({ length: kv.nSlots }, () => []);
    this.states = states;
    this.stateAt = new Array<number>(kv.nSlots).fill(0);
    this.snapshotBudget = Math.max(0, snapshotBudget);
  }

  /** True when the model keeps recurrent state (matches then land only where a state is known). */
  get isRecurrent(): boolean {
    return this.states !== null;
  }

  /** The string form of a key (exact, not hashed: different keys never share a trie). */
  static keyString(key: CacheKey): string {
    return JSON.stringify([key.model, key.template, key.tokenizer]);
  }

  /** A copy of the counters. */
  stats(): PromptCacheStats {
    return { ...this.counters };
  }

  /**
   * The longest cached prefix of `prompt` under `key`, at most `maxMatch` tokens, confirmed token by token against
   * the slot's record. Prefers an unused slot, then one whose whole content is that prefix, then the most recent.
   */
  lookup(key: string, prompt: readonly number[], maxMatch = prompt.length): { slot: number; matched: number } | null {
    const root = this.roots.get(key);
    if (!root) return null;
    let node: TrieNode = root;
    let depth = 0;
    let best: TrieNode | null = null;
    let bestDepth = 0;
    const limit = Math.min(maxMatch, prompt.length);
    while (depth < limit) {
      const child: TrieNode | undefined = node.children.get(prompt[depth]);
      if (!child || child.slots.size === 0) break;
      node = child;
      depth++;
      best = node;
      bestDepth = depth;
    }
    if (!best) return null;
    let chosen = -1;
    let chosenRank: [number, number, number] = [-1, -1, -1];
    for (const s of best.slots) {
      const rec = this.kv.slot(s);
      if (rec.key !== key || !samePrefix(rec.tokens, prompt, bestDepth)) continue; // confirm, never trust the trie alone
      const rank: [number, number, number] = [
        rec.refs === 0 ? 1 : 0,
        rec.tokens.length === bestDepth ? 1 : 0,
        rec.lastUsed,
      ];
      if (chosen < 0 || compareRank(rank, chosenRank) > 0) {
        chosen = s;
        chosenRank = rank;
      }
    }
    return chosen < 0 ? null : { slot: chosen, matched: bestDepth };
  }

  /**
   * Leases a slot for `prompt` under `key`: reuses the longest cached prefix (at most prompt.length − 1 tokens, so
   * at least one token is evaluated and yields logits) and leaves the slot's record truncated to that prefix.
   */
  acquire(key: string, prompt: readonly number[]): SlotLease {
    this.counters.lookups++;
    const kvMatch = this.lookup(key, prompt, prompt.length - 1);
    // Recurrent models: only where a state is known (the slot's own, or a snapshot); null when none is.
    const restore = kvMatch && this.states ? this.stateMatch(key, prompt, kvMatch.slot, kvMatch.matched) : null;
    const match = kvMatch && this.states ? (restore ? { slot: kvMatch.slot, matched: restore.at } : null) : kvMatch;
    let slot: number;
    let reused = 0;
    if (match) {
      this.counters.hits++;
      this.counters.hitTokens += match.matched;
      const owner = this.kv.slot(match.slot);
      const victim = this.pickVictim(match.slot);
      // Reuse in place (losing the owner's tail) or copy the prefix to a victim slot (losing the victim's
      // contents): whichever discards fewer cached tokens; in place on a tie (no copy needed).
      const lostInPlace = owner.tokens.length - match.matched;
      const lostByCopy = victim < 0 ? Infinity : this.kv.slot(victim).tokens.length;
      if (owner.refs === 0 && lostInPlace <= lostByCopy) {
        slot = match.slot;
        this.truncate(slot, match.matched);
      } else if (victim >= 0) {
        slot = victim;
        this.copySlot(match.slot, victim, match.matched); // KV prefix (and the owner's whole recurrent state)
        this.counters.copies++;
        this.record(victim, key, owner.tokens.slice(0, match.matched));
      } else {
        throw new Error('prompt cache: every slot is in use');
      }
      if (restore?.snapshot) {
        this.states!.write(slot, restore.snapshot.state);
        restore.snapshot.lastUsed = ++this.snapshotClock;
        this.counters.snapshotRestores++;
      }
      reused = match.matched;
      this.counters.reusedTokens += reused;
    } else {
      slot = this.pickVictim(-1);
      if (slot < 0) throw new Error('prompt cache: every slot is in use');
      this.truncate(slot, 0);
    }
    this.stateAt[slot] = reused; // the state describes the reused prefix (a fresh sequence's is zeros at 0)
    this.kv.ref(slot);
    return { slot, key, reused };
  }

  /**
   * Where a recurrent model's prompt can resume in `slot` (whose KV holds `matched` tokens of it): the slot's own
   * state when it sits within the match, or the longest snapshot of a prefix of at most `matched` tokens.
   */
  private stateMatch(
    key: string,
    prompt: readonly number[],
    slot: number,
    matched: number,
  ): { at: number; snapshot: StateSnapshot | null } | null {
    const own = this.stateAt[slot];
    let best: { at: number; snapshot: StateSnapshot | null } | null =
      own > 0 && own <= matched ? { at: own, snapshot: null } : null;
    for (const snap of this.snapshots) {
      const n = snap.tokens.length;
      if (snap.key !== key || n > matched || n <= (best?.at ?? 0) || !samePrefix(snap.tokens, prompt, n)) continue;
      best = { at: n, snapshot: snap };
    }
    return best;
  }

  /**
   * The longest prefix of `prompt` whose KV is cached (up to prompt.length − 1 tokens), whether or not a recurrent
   * state is known there: a recurrent model's request stops its prefill there to take a snapshot, so that the next
   * prompt sharing that prefix resumes from it.
   */
  sharedPrefix(key: string, prompt: readonly number[]): number {
    return this.lookup(key, prompt, prompt.length - 1)?.matched ?? 0;
  }

  /** Marks `slot`'s recurrent state as unknown: it is about to be written (cleared again by `append`). */
  beginWrite(slot: number): void {
    if (this.states) this.stateAt[slot] = -1;
  }

  /**
   * Keeps a snapshot of the lease's recurrent state at the slot's current extent (only when that state is known and
   * no snapshot of those tokens exists); evicts the least recently used beyond the budget. No-op for other models.
   */
  async snapshot(lease: SlotLease): Promise<void> {
    if (!this.states || this.snapshotBudget === 0) return;
    const rec = this.kv.slot(lease.slot);
    const n = rec.tokens.length;
    if (n === 0 || this.stateAt[lease.slot] !== n) return;
    const existing = this.snapshots.find(
      (s) => s.key === lease.key && s.tokens.length === n && samePrefix(s.tokens, rec.tokens, n),
    );
    if (existing) {
      existing.lastUsed = ++this.snapshotClock;
      return;
    }
    const tokens = rec.tokens.slice();
    const state = await this.states.read(lease.slot);
    if (!state || this.stateAt[lease.slot] !== n) return; // written meanwhile: not the state of these tokens
    this.snapshots.push({ key: lease.key, tokens, state, lastUsed: ++this.snapshotClock });
    this.counters.stateSnapshots++;
    while (this.snapshots.length > this.snapshotBudget) {
      let lru = 0;
      for (let i = 1; i < this.snapshots.length; i++) {
        if (this.snapshots[i].lastUsed < this.snapshots[lru].lastUsed) lru = i;
      }
      this.snapshots.splice(lru, 1);
    }
  }

  /**
   * Declares that an unused slot's cells 0 … tokens.length−1 now hold the KV of `tokens` under `key` (written
   * directly, e.g. restored from the persisted cache). Throws when the slot is in use.
   */
  adopt(slot: number, key: string, tokens: readonly number[]): void {
    if (this.kv.slot(slot).refs > 0) throw new Error(`prompt cache: slot ${slot} is in use`);
    this.truncate(slot, 0);
    this.record(slot, key, tokens);
    this.stateAt[slot] = -1; // KV only: a recurrent state for these tokens is not known
    this.kv.ref(slot);
    this.kv.unref(slot);
  }

  /** Records tokens written after the slot's current extent (call only once their KV is completely written). */
  append(lease: SlotLease, tokens: readonly number[]): void {
    const rec = this.kv.slot(lease.slot);
    this.record(lease.slot, lease.key, [...rec.tokens, ...tokens]);
    this.stateAt[lease.slot] = this.kv.slot(lease.slot).tokens.length; // completely written up to here
  }

  /**
   * After a context shift of the lease's slot: only cells 0 … nKeep−1 still hold the KV of the tokens recorded
   * there (the moved cells' values were computed alongside the discarded tokens), so the record is cut to them and
   * the caller appends nothing more for this lease — shifted cells are never served as a prefix.
   */
  shifted(lease: SlotLease, nKeep: number): void {
    this.truncate(lease.slot, Math.min(nKeep, this.kv.slot(lease.slot).tokens.length));
  }

  /** Ends a lease and trims unused slots, least recently used first, down to the token budget. */
  release(lease: SlotLease): void {
    this.kv.unref(lease.slot);
    this.evictToBudget();
  }

  /** Forgets everything (warmup, unload); counters are kept unless `resetStats`. */
  clear(resetStats = false): void {
    this.kv.clear();
    this.roots.clear();
    for (const p of this.paths) p.length = 0;
    this.stateAt.fill(0);
    this.snapshots.length = 0;
    if (resetStats) for (const k of Object.keys(this.counters) as (keyof PromptCacheStats)[]) this.counters[k] = 0;
  }

  /** Trims LRU unused slots until the cached tokens fit the budget. */
  evictToBudget(): void {
    let excess = this.kv.totalTokens() - this.tokenBudget;
    if (excess <= 0) return;
    const candidates = this.kv
      .all()
      .filter((s) => s.refs === 0 && s.tokens.length > 0)
      .sort((a, b) => a.lastUsed - b.lastUsed);
    for (const s of candidates) {
      if (excess <= 0) break;
      const cut = Math.min(excess, s.tokens.length);
      this.truncate(s.index, s.tokens.length - cut);
      this.counters.evictions++;
      this.counters.evictedTokens += cut;
      excess -= cut;
    }
  }

  /** An unused slot other than `except`: an empty one first, else the least recently used; −1 if none. */
  private pickVictim(except: number): number {
    let best = -1;
    for (const s of this.kv.all()) {
      if (s.index === except || s.refs > 0) continue;
      if (best < 0) {
        best = s.index;
        continue;
      }
      const b = this.kv.slot(best);
      const sEmpty = s.tokens.length === 0;
      const bEmpty = b.tokens.length === 0;
      if ((sEmpty && !bEmpty) || (sEmpty === bEmpty && s.lastUsed < b.lastUsed)) best = s.index;
    }
    return best;
  }

  /** Sets slot `slot` to hold `tokens` under `key`, updating the trie along the way. */
  private record(slot: number, key: string, tokens: readonly number[]): void {
    const rec = this.kv.slot(slot);
    const keep = rec.key === key ? commonPrefix(rec.tokens, tokens) : 0;
    this.truncate(slot, keep);
    const path = this.paths[slot];
    let node = keep === 0 ? this.root(key) : path[keep - 1];
    for (let i = keep; i < tokens.length; i++) {
      let child = node.children.get(tokens[i]);
      if (!child) {
        child = { children: new Map(), slots: new Set(), parent: node, token: tokens[i] };
        node.children.set(tokens[i], child);
      }
      child.slots.add(slot);
      path.push(child);
      node = child;
    }
    this.kv.set(slot, key, tokens);
  }

  /** Cuts slot `slot` back to `n` tokens in both the trie and the slot record. */
  private truncate(slot: number, n: number): void {
    const path = this.paths[slot];
    const key = this.kv.slot(slot).key;
    while (path.length > n) {
      let node: TrieNode | null = path.pop()!;
      node.slots.delete(slot);
      // Prune nodes no slot holds any more.
      while (node?.parent && node.slots.size === 0 && node.children.size === 0) {
        node.parent.children.delete(node.token);
        node = node.parent;
      }
    }
    this.kv.truncate(slot, n);
    if (n < this.stateAt[slot]) this.stateAt[slot] = -1; // a recurrent state cannot be cut back
    if (n === 0) {
      const root = this.roots.get(key);
      if (root && root.children.size === 0) this.roots.delete(key);
    }
  }

  private root(key: string): TrieNode {
    let r = this.roots.get(key);
    if (!r) {
      r = { children: new Map(), slots: new Set(), parent: null, token: -1 };
      this.roots.set(key, r);
    }
    return r;
  }
}

function samePrefix(a: readonly number[], b: readonly number[], n: number): boolean {
  if (a.length < n || b.length < n) return false;
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function compareRank(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}
