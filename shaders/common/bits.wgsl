// Bit helpers for the quant snippets (shaders/quant/*.wgsl): unpack nibbles, bytes and halves from the u32 words
// of a repacked block. `weights` is the kernel's (n_rows, row_stride) u32 weight binding.

/** Four 4-bit fields: bits shift.., shift+8.., shift+16.., shift+24.. of `w` (shift 0 = low nibbles, 4 = high). */
fn nib4(w: u32, shift: u32) -> vec4<f32> {
  return vec4<f32>((vec4<u32>(w) >> vec4<u32>(shift, shift + 8u, shift + 16u, shift + 24u)) & vec4<u32>(0xfu));
}

/** Four `mask`-wide fields at bit `shift` of each byte of `w`, as integers. */
fn bits4(w: u32, shift: u32, mask: u32) -> vec4<u32> {
  return (vec4<u32>(w) >> vec4<u32>(shift, shift + 8u, shift + 16u, shift + 24u)) & vec4<u32>(mask);
}

/** The four bytes of `w` as signed int8 values. */
fn i8x4(w: u32) -> vec4<f32> {
  return vec4<f32>(bitcast<vec4<i32>>(vec4<u32>(w) << vec4<u32>(24u, 16u, 8u, 0u)) >> vec4<u32>(24u));
}

/** Byte `o` (0-based, little-endian) of the block starting at word `bw`. */
fn wbyte(bw: u32, o: u32) -> u32 {
  return (weights[bw + (o >> 2u)] >> ((o & 3u) * 8u)) & 0xffu;
}

fn f16_lo(w: u32) -> f32 { return unpack2x16float(w).x; }
fn f16_hi(w: u32) -> f32 { return unpack2x16float(w).y; }
