/** A deterministic RGB8 test picture of `width` × `height` from `seed` (see seed-image.mjs). */
export declare function seedImage(
  width: number,
  height: number,
  seed: number,
): { width: number; height: number; data: Uint8Array };
