/**
 * Test helper: builds a SentencePiece precompiled charsmap (the bytes of `tokenizer.ggml.precompiled_charsmap`) from
 * a key → replacement table, so synthetic UGM vocabularies carry a real normaliser. Layout (the format llama.cpp
 * reads): u32 LE size of the XCDA units, the units (u32 LE), then the NUL-terminated replacement strings. A node's
 * children sit at `id ^ BASE(id) ^ label`; a key's end is a child with LEAF set whose own `id ^ BASE(id)` unit (label
 * 0) holds bit 31 and the replacement's offset. Placement is first-fit with every `id ^ BASE(id)` distinct, so a
 * label check can never accept another node's child.
 */

interface Node {
  children: Map<number, Node>;
  value: number; // offset into the strings, -1 when no key ends here
  id: number;
}

/** The charsmap bytes for `table` (keys and replacements as strings; a replacement may be ''). */
export function buildCharsmap(table: ReadonlyArray<readonly [key: string, replacement: string]>): Uint8Array {
  const enc = new TextEncoder();
  const strings: number[] = [];
  const root: Node = { children: new Map(), value: -1, id: 0 };
  for (const [key, repl] of table) {
    const offset = strings.length;
    strings.push(...enc.encode(repl), 0);
    let node = root;
    for (const b of enc.encode(key)) {
      if (b === 0) throw new Error('charsmap keys cannot hold NUL');
      let child = node.children.get(b);
      if (!child) {
        child = { children: new Map(), value: -1, id: -1 };
        node.children.set(b, child);
      }
      node = child;
    }
    node.value = offset;
  }

  const units: number[] = [0];
  const used = new Set<number>([0]);
  const usedBases = new Set<number>();
  const set = (i: number, u: number): void => {
    while (units.length <= i) units.push(0);
    units[i] = u >>> 0;
    used.add(i);
  };
  // Breadth-first: a node's id is fixed (by its parent) before the node places its own children.
  const queue: Node[] = [root];
  while (queue.length > 0) {
    const node = queue.shift()!;
    const labels = [...node.children.keys()];
    if (node.value >= 0) labels.push(0);
    if (labels.length === 0) continue;
    let base = 1;
    for (; ; base++) {
      if (usedBases.has(base)) continue;
      const offset = node.id ^ base;
      if (offset >= 1 << 21) throw new Error('charsmap too large for this builder');
      if (labels.every((l) => !used.has(base ^ l))) break;
    }
    usedBases.add(base);
    const offset = node.id ^ base;
    // BASE of this node, keeping its LCHECK/LEAF bits (the root's unit 0 has none).
    units[node.id] = ((units[node.id] & 0x1ff) | (offset << 10)) >>> 0;
    for (const l of labels) {
      const at = base ^ l;
      if (l === 0) {
        set(at, 0x80000000 | node.value);
        continue;
      }
      const child = node.children.get(l)!;
      child.id = at;
      set(at, l | (child.value >= 0 ? 0x100 : 0));
      queue.push(child);
    }
  }
  // Like darts-clone's 256-unit blocks: `base ^ c` must stay inside the array for every byte c (llama.cpp bounds-checks).
  let maxBase = 0;
  for (const b of usedBases) maxBase = Math.max(maxBase, b);
  while (units.length < (maxBase | 0xff) + 1) units.push(0);
  const out = new Uint8Array(4 + units.length * 4 + strings.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, units.length * 4, true);
  units.forEach((u, i) => view.setUint32(4 + i * 4, u, true));
  out.set(strings, 4 + units.length * 4);
  return out;
}
