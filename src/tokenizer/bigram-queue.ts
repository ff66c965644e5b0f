/**
 * `BigramQueue`: the priority queue of candidate merges shared by the SPM and BPE tokenizers. Pops the smallest
 * `priority`, ties broken by the smallest left symbol index — llama.cpp's comparators (`llm_bigram_spm`: highest score
 * first, so SPM pushes −score; `llm_bigram_bpe`: lowest merge rank first). A binary heap over parallel typed arrays,
 * reused across words so tokenizing allocates almost nothing per word. `mergeBigrams` is the merge loop both run.
 */

/** Min-heap of (priority, left, right, size) entries. */
export class BigramQueue {
  /** Shape: (capacity,) f64 */
  private priority = new Float64Array(64);
  /** Shape: (capacity,) i32 — left symbol index (also the tie-breaker). */
  private left = new Int32Array(64);
  /** Shape: (capacity,) i32 */
  private right = new Int32Array(64);
  /** Shape: (capacity,) i32 — byte/char length of the merged text when pushed (staleness check). */
  private size = new Int32Array(64);
  private n = 0;

  /** Number of queued entries. */
  get length(): number {
    return this.n;
  }

  /** Empties the queue (capacity is kept for the next word). */
  clear(): void {
    this.n = 0;
  }

  private less(i: number, j: number): boolean {
    const pi = this.priority[i];
    const pj = this.priority[j];
    return pi < pj || (pi === pj && this.left[i] < this.left[j]);
  }

  private swap(i: number, j: number): void {
    const p = this.priority[i];
    this.priority[i] = this.priority[j];
    this.priority[j] = p;
    const l = this.left[i];
    this.left[i] = this.left[j];
    this.left[j] = l;
    const r = this.right[i];
    this.right[i] = this.right[j];
    this.right[j] = r;
    const s = this.size[i];
    this.size[i] = this.size[j];
    this.size[j] = s;
  }

  private grow(): void {
    const cap = this.priority.length * 2;
    const p = new Float64Array(cap);
    p.set(this.priority);
    this.priority = p;
    const l = new Int32Array(cap);
    l.set(this.left);
    this.left = l;
    const r = new Int32Array(cap);
    r.set(this.right);
    this.right = r;
    const s = new Int32Array(cap);
    s.set(this.size);
    this.size = s;
  }

  /** Queues the merge of symbols `left` and `right`, whose merged text is `size` units long. */
  push(priority: number, left: number, right: number, size: number): void {
    if (this.n === this.priority.length) this.grow();
    let i = this.n++;
    this.priority[i] = priority;
    this.left[i] = left;
    this.right[i] = right;
    this.size[i] = size;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Removes the top entry and writes it to `out` as [left, right, size]. Call only when `length > 0`. */
  pop(out: Int32Array): void {
    out[0] = this.left[0];
    out[1] = this.right[0];
    out[2] = this.size[0];
    const last = --this.n;
    if (last === 0) return;
    this.priority[0] = this.priority[last];
    this.left[0] = this.left[last];
    this.right[0] = this.right[last];
    this.size[0] = this.size[last];
    let i = 0;
    for (;;) {
      const a = 2 * i + 1;
      const b = a + 1;
      let m = i;
      if (a < last && this.less(a, m)) m = a;
      if (b < last && this.less(b, m)) m = b;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
  }
}

/**
 * The merge loop SPM and BPE share (llama.cpp `llm_tokenizer_spm_session::tokenize` and
 * `llm_tokenizer_bpe_session::tokenize`): pops the best bigram, skips it when stale (one side was merged since it was
 * queued — symbols only grow, so lengths tell), merges the right symbol into the left one in the linked list, and
 * offers the two new neighbour pairs through `addBigram` (which ignores negative indices and unknown pairs).
 * `len`, `prev`, `next`: shape (nSymbols,) i32 — symbol length (0 once merged away) and list links (−1 at the ends).
 */
export function mergeBigrams(
  queue: BigramQueue,
  popped: Int32Array,
  len: Int32Array,
  prev: Int32Array,
  next: Int32Array,
  addBigram: (left: number, right: number) => void,
): void {
  while (queue.length > 0) {
    queue.pop(popped);
    const l = popped[0];
    const r = popped[1];
    if (len[l] === 0 || len[r] === 0 || len[l] + len[r] !== popped[2]) continue;
    len[l] += len[r];
    len[r] = 0;
    next[l] = next[r];
    if (next[r] >= 0) prev[next[r]] = l;
    addBigram(prev[l], l);
    addBigram(l, next[l]);
  }
}
