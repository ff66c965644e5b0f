/**
 * Sign tables shared by the IQ2/IQ3 codebook types (ggml-common.h `ksigns_iq2xs`, `kmask_iq2xs`): a 7-bit sign index
 * stands for 8 signs whose eighth is the parity of the other seven (an even number of minus signs in every group).
 */

/** ggml `ksigns_iq2xs`: index i (0..127) → i with bit 7 set when i has an odd number of set bits. */
export const KSIGNS_IQ2XS: Uint8Array = Uint8Array.from({ length: 128 }, (_, i) => {
  let p = 0;
  for (let b = i; b !== 0; b >>= 1) p ^= b & 1;
  return i | (p << 7);
});

/** ±1 for element j (0..7) of a group whose sign byte is `signs`: −1 where bit j is set (ggml `kmask_iq2xs[j]`). */
export function signOf(signs: number, j: number): number {
  return (signs >> j) & 1 ? -1 : 1;
}
