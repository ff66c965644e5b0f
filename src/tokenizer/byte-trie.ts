/**
 * `ByteTrie`: a trie over byte strings (llama.cpp's `naive_trie`), used by the UGM and RWKV tokenizers. Keys are
 * inserted into a growable linked-child trie, which is then frozen on first lookup into a compact breadth-first
 * layout: the children of a node are consecutive ids sorted by byte, so a node costs 9 bytes (first child, edge byte,
 * value) and a child is found by binary search. A 250k-token vocabulary fits in a few MB.
 */

/** A byte-string trie mapping keys to token ids. Node 0 is the root; a missing child is -1. */
export class ByteTrie {
  // Build form (until frozen): first child, next sibling, edge byte and value per node.
  private bFirst: Int32Array | null = new Int32Array(1024).fill(-1);
  private bNext: Int32Array | null = new Int32Array(1024).fill(-1);
  private bLabel: Uint8Array | null = new Uint8Array(1024);
  private bValue: Int32Array | null = new Int32Array(1024).fill(-1);
  private count = 1;
  // Frozen form: children of node i are ids first[i] .. first[i + 1] - 1, sorted by label.
  private first = new Int32Array(0);
  private label = new Uint8Array(0);
  private values = new Int32Array(0);

  private grow(): void {
    const n = this.bFirst!.length * 2;
    const widen = (a: Int32Array): Int32Array => {
      const b = new Int32Array(n).fill(-1);
      b.set(a);
      return b;
    };
    this.bFirst = widen(this.bFirst!);
    this.bNext = widen(this.bNext!);
    this.bValue = widen(this.bValue!);
    const l = new Uint8Array(n);
    l.set(this.bLabel!);
    this.bLabel = l;
  }

  /** Sets `key` → `value` (a later insert of the same key replaces the value, as in llama.cpp). Before any lookup. */
  insert(key: Uint8Array, value: number): void {
    if (!this.bFirst) throw new Error('ByteTrie: insert after lookup');
    let node = 0;
    for (let i = 0; i < key.length; i++) {
      const b = key[i];
      if (this.count >= this.bFirst.length) this.grow();
      const first = this.bFirst,
        next = this.bNext!,
        label = this.bLabel!;
      // Sibling lists are kept sorted by byte, so freezing needs no sort.
      let prev = -1;
      let c = first[node];
      while (c >= 0 && label[c] < b) {
        prev = c;
        c = next[c];
      }
      if (c < 0 || label[c] !== b) {
        const fresh = this.count++;
        label[fresh] = b;
        next[fresh] = c;
        if (prev < 0) first[node] = fresh;
        else next[prev] = fresh;
        c = fresh;
      }
      node = c;
    }
    this.bValue![node] = value;
  }

  /** Renumbers breadth-first with sorted children and drops the build arrays. */
  private freeze(): void {
    const n = this.count;
    const bFirst = this.bFirst!,
      bNext = this.bNext!,
      bLabel = this.bLabel!,
      bValue = this.bValue!;
    const order = new Int32Array(n); // new id → old id
    const first = new Int32Array(n + 1);
    const label = new Uint8Array(n);
    const values = new Int32Array(n);
    let assigned = 1;
    for (let id = 0; id < n; id++) {
      const old = order[id];
      values[id] = bValue[old];
      first[id] = assigned;
      for (let c = bFirst[old]; c >= 0; c = bNext[c]) {
        order[assigned] = c;
        label[assigned] = bLabel[c];
        assigned++;
      }
    }
    first[n] = assigned;
    this.first = first;
    this.label = label;
    this.values = values;
    this.bFirst = this.bNext = this.bValue = null;
    this.bLabel = null;
  }

  /** The child of `node` along byte `b`, or -1. */
  child(node: number, b: number): number {
    if (this.bFirst) this.freeze();
    let lo = this.first[node];
    let hi = this.first[node + 1] - 1;
    const label = this.label;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const l = label[mid];
      if (l === b) return mid;
      if (l < b) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** The value stored at `node`, or -1 when no key ends there. */
  value(node: number): number {
    if (this.bFirst) this.freeze();
    return this.values[node];
  }

  /**
   * Length of the deepest path from the root that `bytes[from..end)` follows, whether or not a key ends there
   * (llama.cpp `naive_trie::get_longest_prefix`, which UGM's user-defined token matching relies on).
   */
  longestPath(bytes: Uint8Array, from: number, end: number): number {
    let node = 0;
    let i = from;
    while (i < end) {
      const c = this.child(node, bytes[i]);
      if (c < 0) break;
      node = c;
      i++;
    }
    return i - from;
  }
}
