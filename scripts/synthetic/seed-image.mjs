// The committed "seed image": an RGB8 picture drawn deterministically from (width, height, seed) — smooth gradients,
// a hard-edged checkerboard and mulberry32 noise, so resampling meets flat areas, edges and high frequencies. Plain JS
// so the tests (TypeScript) and the llama.cpp oracle scripts (Node, no TypeScript) draw the very same pixels; no
// binary image is committed.

import { mulberry32 } from '../deterministic-random.mjs';

/**
 * @param {number} width
 * @param {number} height
 * @param {number} seed
 * @returns {{ width: number, height: number, data: Uint8Array }} row-major RGBRGB…
 */
export function seedImage(width, height, seed) {
  const rand = mulberry32(seed);
  const data = new Uint8Array(width * height * 3);
  const cell = Math.max(2, Math.round(Math.min(width, height) / 7));
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const checker = (Math.floor(x / cell) + Math.floor(y / cell)) % 2 === 0 ? 48 : -48;
      const noise = () => Math.floor(rand() * 41) - 20;
      const r = (x * 255) / Math.max(1, width - 1) + checker + noise();
      const g = (y * 255) / Math.max(1, height - 1) - checker + noise();
      const b = 128 + 100 * Math.sin((x + 2 * y) / 5) + noise();
      const o = (y * width + x) * 3;
      data[o] = Math.max(0, Math.min(255, Math.round(r)));
      data[o + 1] = Math.max(0, Math.min(255, Math.round(g)));
      data[o + 2] = Math.max(0, Math.min(255, Math.round(b)));
    }
  }
  return { width, height, data };
}
