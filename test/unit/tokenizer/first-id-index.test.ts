import { describe, expect, it } from 'vitest';
import { FirstIdIndex } from '../../../src/tokenizer/first-id-index.js';

/** Keys with duplicates (the first index must win) and texts of equal length and first unit. */
const KEYS = ['a', '<s>', 'ab', '<s>', '<x>', 'b', 'ab', '', '<t>', '<x>'];

function counted(keys: readonly string[]) {
  const calls = { n: 0 };
  const index = new FirstIdIndex(keys.length, (i) => {
    calls.n++;
    return keys[i];
  });
  return { index, calls };
}

describe('FirstIdIndex', () => {
  it('answers the first index of each key, and undefined for texts not among them', () => {
    const { index } = counted(KEYS);
    expect(index.get('<s>')).toBe(1);
    expect(index.get('ab')).toBe(2);
    expect(index.get('<x>')).toBe(4);
    expect(index.get('')).toBe(7);
    expect(index.get('<t>')).toBe(8);
    expect(index.get('zz')).toBeUndefined();
    for (let i = 0; i < KEYS.length; i++) expect(index.get(KEYS[i])).toBe(KEYS.indexOf(KEYS[i]));
  });

  it('reads no key until the first lookup, then each key once', () => {
    const { index, calls } = counted(KEYS);
    expect(calls.n).toBe(0);
    index.get('a'); // a hit in the (empty) partial map cannot answer: the map is completed
    expect(calls.n).toBe(KEYS.length);
    index.get('<t>');
    index.get('missing');
    expect(calls.n).toBe(KEYS.length);
  });

  it('builds in idle slices over the event loop, with the same answers', async () => {
    const keys = Array.from({ length: 5000 }, (_, i) => `k${i % 3000}`); // every key up to 2999 twice
    const { index, calls } = counted(keys);
    index.buildWhenIdle();
    index.buildWhenIdle(); // idempotent
    expect(calls.n).toBe(0); // nothing on the calling turn
    for (let t = 0; t < 200 && calls.n < keys.length; t++) await new Promise((r) => setTimeout(r, 1));
    expect(calls.n).toBe(keys.length);
    expect(index.get('k2999')).toBe(2999);
    expect(index.get('k5')).toBe(5);
    expect(index.get('k3000')).toBeUndefined();
    expect(calls.n).toBe(keys.length);
  });

  it('finds a few texts in one pass without building the map (first indices, shape collisions kept apart)', () => {
    const { index, calls } = counted(KEYS);
    const found = index.firstOf(['<x>', '<s>', '<t>', '<q>', 'ab', '']);
    expect([...found].sort()).toEqual([
      ['', 7],
      ['<s>', 1],
      ['<t>', 8],
      ['<x>', 4],
      ['ab', 2],
    ]);
    expect(calls.n).toBe(KEYS.length); // one pass
    expect(index.get('b')).toBe(5); // the map is still built on demand
  });
});
