/**
 * Image chunks in the prompt cache's terms (engine/prompt-images.ts): placeholder ids are negative, spelled from the
 * image's hash (same image, same ids; another image differs from its first position), and a cached prefix that ends
 * inside an image chunk resumes at the chunk's start (a non-causal chunk is never evaluated in part).
 */

import { describe, expect, it } from 'vitest';
import { imagePlaceholders, type PromptImage, resumeAt } from '../../../src/engine/prompt-images.js';

const HASH_A = 'a3f1c2d4'.padEnd(64, '0');
const HASH_B = 'a3f1c2d5'.padEnd(64, '0'); // one more than A in its first 30 bits: B's ids are A's shifted by one

describe('prompt images', () => {
  it('placeholders: negative, the same for the same hash, different from the first position for another', () => {
    const a = imagePlaceholders(HASH_A, 8);
    expect(a.every((id) => id < 0)).toBe(true);
    expect(new Set(a).size).toBe(8);
    expect(imagePlaceholders(HASH_A, 8)).toEqual(a);
    const b = imagePlaceholders(HASH_B, 8);
    expect(b[0]).not.toBe(a[0]);
    expect(b.slice(0, 7)).toEqual(a.slice(1)); // overlapping runs never line up at the same prompt position
  });

  it('a cached prefix ending inside an image chunk resumes at its start', () => {
    const img = (start: number, nTokens: number): PromptImage => ({
      start,
      nTokens,
      embeddings: new Float32Array(0),
      nonCausal: true,
    });
    const images = [img(5, 4), img(20, 16)];
    expect(resumeAt(3, images)).toBe(3);
    expect(resumeAt(5, images)).toBe(5); // at the start: nothing of the chunk cached
    expect(resumeAt(7, images)).toBe(5);
    expect(resumeAt(9, images)).toBe(9); // right after the chunk
    expect(resumeAt(35, images)).toBe(20);
    expect(resumeAt(36, images)).toBe(36);
  });
});
