/**
 * `FirstIdIndex`: text → FIRST index among a list of keys (a vocabulary's token texts, a BPE merge list), the
 * `Map` llama.cpp builds with `emplace` — built lazily instead of inside the tokenizer's constructor (issue 20: in
 * Chromium, inserting a vocabulary's 152k strings into a `Map` from code that runs once took 0.2–0.45 s of a cached
 * model load's critical path, before the first weight was read). The map is filled in order, in short slices, when
 * the thread is idle (`buildWhenIdle`: during a model's weight stream, the thread mostly waits for reads), and
 * completed at once by the first lookup that misses before it is done; a hit in the partial map is already the first
 * index (keys go in in order). `firstOf` answers a few texts without the map (the vocabulary's own by-text fixes).
 */

/** Longest a background slice runs before it yields (ms), where the thread gives no idle deadline. */
const SLICE_MS = 4;
/** Keys inserted between clock checks in a slice. */
const KEYS_PER_CHECK = 512;

/** `requestIdleCallback`'s deadline, as far as it is used here. */
interface IdleDeadline {
  timeRemaining(): number;
}

/** A text → first-index map over `count` keys, built on demand or in idle slices. */
export class FirstIdIndex {
  private readonly map = new Map<string, number>();
  /** Keys `[0, built)` are in `map`. */
  private built = 0;
  private isScheduled = false;

  constructor(
    /** Number of keys. */
    private readonly count: number,
    /** Key `i` (the same string on every call). */
    private readonly keyAt: (i: number) => string,
  ) {}

  /** The first index whose key is `text`, or undefined. */
  get(text: string): number | undefined {
    const id = this.map.get(text);
    if (id !== undefined || this.built === this.count) return id;
    this.fill(this.count);
    return this.map.get(text);
  }

  /**
   * Schedules the build in slices when the thread is idle (`requestIdleCallback` where there is one, else short
   * timer slices), so it fills the gaps of an asynchronous load instead of running before it. Idempotent.
   */
  buildWhenIdle(): void {
    if (this.isScheduled || this.built === this.count) return;
    this.isScheduled = true;
    const step = (deadline?: IdleDeadline): void => {
      const t0 = performance.now();
      const hasTime = () => (deadline ? deadline.timeRemaining() > 1 : performance.now() - t0 < SLICE_MS);
      do this.fill(Math.min(this.count, this.built + KEYS_PER_CHECK));
      while (this.built < this.count && hasTime());
      if (this.built < this.count) later(step);
      else this.isScheduled = false;
    };
    later(step);
  }

  /**
   * The first index of each of `texts` that occurs among the keys, without building the map: one pass that looks
   * up only the keys whose length and first UTF-16 unit match one of `texts` (a vocabulary's few hundred `<…>`
   * tokens, not its 150k words).
   */
  firstOf(texts: Iterable<string>): Map<string, number> {
    const wanted = new Set<string>(texts);
    let maxLength = 0;
    for (const t of wanted) maxLength = Math.max(maxLength, t.length);
    const lengths = new Uint8Array(maxLength + 1); // 1 where some wanted text has that length
    const firstUnits = new Uint8Array(65536); // 1 where some wanted text starts with that UTF-16 unit
    for (const t of wanted) {
      lengths[t.length] = 1;
      if (t.length > 0) firstUnits[t.charCodeAt(0)] = 1;
    }
    const found = new Map<string, number>();
    for (let i = 0; i < this.count && found.size < wanted.size; i++) {
      const k = this.keyAt(i);
      const n = k.length;
      if (n > maxLength || lengths[n] === 0 || (n > 0 && firstUnits[k.charCodeAt(0)] === 0)) continue;
      if (wanted.has(k) && !found.has(k)) found.set(k, i);
    }
    return found;
  }

  private fill(end: number): void {
    const { map, keyAt } = this;
    for (let i = this.built; i < end; i++) {
      const k = keyAt(i);
      if (!map.has(k)) map.set(k, i);
    }
    if (end > this.built) this.built = end;
  }
}

/** Runs `f` when the thread is idle (browsers), else on a later turn of the event loop (an unref'd Node timer). */
function later(f: (deadline?: IdleDeadline) => void): void {
  const g = globalThis as { requestIdleCallback?: (cb: (d: IdleDeadline) => void) => number };
  if (typeof g.requestIdleCallback === 'function') {
    g.requestIdleCallback(f);
    return;
  }
  const t = setTimeout(f, 0) as unknown as { unref?: () => void };
  t.unref?.();
}
