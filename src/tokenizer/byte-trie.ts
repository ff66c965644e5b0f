/**
 * `ByteTrie`: a trie over byte strings (llama.cpp's `naive_trie`), used by the UGM and RWKV tokenizers. Nodes are
 * integers; edges live in one map keyed by `node * 256 + byte`, so a large vocabulary costs one entry per edge.
 */

/** A byte-string trie mapping keys to token ids. Node 0 is the root. */
export class ByteTrie {
  private readonly edges = new Map<number, number>();
  /** Value per node, -1 when the node ends no key. Grown on insert. */
  private values = new Int32Array(1024).fill(-1);
  private nodes = 1;

  /** Sets `key` → `value` (a later insert of the same key replaces the value, as in llama.cpp). */
  insert(key: Uint8Array, value: number): void {
    let node = 0;
    for (const b of key) {
      const k = node * 256 + b;
      let child = this.edges.get(k);
      if (child === undefined) {
        child = this.nodes++;
        if (child >= this.values.length) {
          const grown = new Int32Array(this.values.length * 2).fill(-1);
          grown.set(this.values);
          this.values = grown;
        }
        this.edges.set(k, child);
      }
      node = child;
    }
    this.values[node] = value;
  }

  /** The child of `node` along byte `b`, or -1. */
  child(node: number, b: number): number {
    return this.edges.get(node * 256 + b) ?? -1;
  }

  /** The value stored at `node`, or -1 when no key ends there. */
  value(node: number): number {
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
