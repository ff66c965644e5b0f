/**
 * Numeric array values parse to the file's values when the bytes are a Node `Buffer` (a `MemoryByteSource` over
 * `readFileSync`): Buffer's `slice` is a view into its pool, so the array copy must use Uint8Array's own `slice`.
 */

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { parseGguf } from '../../../src/gguf/parse.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

it('per-layer u32 and bool arrays read from a Buffer-backed source hold the file values', async () => {
  const buf = readFileSync(join(RECORDED_FIXTURE_DIR, 'gemma4-q8_0-s1.gguf'));
  const { metadata } = await parseGguf(new MemoryByteSource(buf, 'buffer'));
  expect(Array.from(metadata['gemma4.feed_forward_length'] as ArrayLike<number>)).toEqual([640, 640, 640, 1280, 1280]);
  const pattern = Array.from(metadata['gemma4.attention.sliding_window_pattern'] as ArrayLike<number>, Number);
  expect(pattern).toEqual([1, 1, 0, 1, 0]);
});
