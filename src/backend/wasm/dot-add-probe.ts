/**
 * Whether this engine runs `i32x4.relaxed_dot_i8x16_i7x16_add_s` as x86 AVX-VNNI's `vpdpbusd` (one instruction: 16
 * products of an unsigned and a signed byte and the i32 accumulation; Chromium 156 on AMD Zen 4 here), so that the
 * `relaxed-dot` kernel build (scripts/build-wasm.mjs, DOT_ADD in wasm/assembly/simd-dot.ts) can run.
 *
 * Relaxed SIMD fixes the result only for a second operand in 0…127; outside it each lowering answers its own way,
 * which tells them apart without timing anything: with a = −128 and b = 200 in four lanes, `vpdpbusd` (b unsigned,
 * no saturation) gives 4 · 200 · −128 = −102400, Arm's signed dot gives 4 · (−56) · (−128) = 28672, and the
 * `pmaddubsw` + `pmaddwd` sequence of engines without such an instruction saturates its i16 pairs (−65536). Lanes
 * 1–3 check the defined range exactly; Node 20's V8 (11.3) fails them (it doubles the sums), so it never gets the build.
 * Measured on this project's machine (AMD EPYC with AVX-VNNI, BENCHMARKS.md "relaxed-dot"): a chain of these
 * dot-adds runs at the rate of `i16x8.relaxed_dot_i8x16_i7x16_s` alone in Chromium 156 (one instruction), and at
 * ~45 % of it in Node 20.
 */

/**
 * (module (memory (export "memory") 1 1) (func (export "f")
 *   (v128.store (i32.const 48) (i32x4.relaxed_dot_i8x16_i7x16_add_s
 *     (v128.load (i32.const 0)) (v128.load (i32.const 16)) (v128.load (i32.const 32))))))
 */
const PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x03, 0x02, 0x01, 0x00, 0x05,
  0x04, 0x01, 0x01, 0x01, 0x01, 0x07, 0x0e, 0x02, 0x01, 0x66, 0x00, 0x00, 0x06, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79,
  0x02, 0x00, 0x0a, 0x1f, 0x01, 0x1d, 0x00, 0x41, 0x30, 0x41, 0x00, 0xfd, 0x00, 0x04, 0x00, 0x41, 0x10, 0xfd, 0x00,
  0x04, 0x00, 0x41, 0x20, 0xfd, 0x00, 0x04, 0x00, 0xfd, 0x93, 0x02, 0xfd, 0x0b, 0x04, 0x00, 0x0b,
]);

/** Operand a (i8), b (lane 0 outside i7 on purpose) and the accumulator, lane by lane. */
const A = [-128, -128, -128, -128, -128, -1, 127, -128, 1, 2, 3, 4, -100, -100, -100, -100];
const B = [200, 200, 200, 200, 127, 127, 127, 5, 5, 6, 7, 8, 100, 100, 100, 100];
const C = [0, 1000, -1000, 7];
/** Lanes 1–3 as the spec defines them: −894 + 1000, 70 − 1000, −40000 + 7. */
const DEFINED = [106, -930, -39993];
/**
 * Lane 0 under `vpdpbusd` (second operand unsigned, no saturation). The relaxed-dot build relies on it: its Q8_0 tile
 * passes bytes 128…255 there. Arm's `sdot` (signed: 28672) would need a build of its own and reads as 'exact'.
 */
const VPDPBUSD = -102400;

/** What the probe read: the four lanes, or null when the engine cannot run it (no relaxed SIMD). */
export function probeDotAdd(): readonly number[] | null {
  try {
    const instance = new WebAssembly.Instance(new WebAssembly.Module(PROBE), {});
    const memory = instance.exports.memory as WebAssembly.Memory;
    const bytes = new Int8Array(memory.buffer, 0, 32);
    for (let i = 0; i < 16; i++) {
      bytes[i] = A[i] as number;
      bytes[16 + i] = ((B[i] as number) << 24) >> 24;
    }
    new Int32Array(memory.buffer, 32, 4).set(C);
    (instance.exports.f as () => void)();
    return Array.from(new Int32Array(memory.buffer, 48, 4));
  } catch {
    return null;
  }
}

/** How this engine runs the dot-add: not at all or wrongly, exactly but as several instructions, or as one. */
export type DotAddSupport = 'none' | 'exact' | 'fast';

/** Classifies the probe's lanes (see the file comment). */
export function classifyDotAdd(lanes: readonly number[] | null): DotAddSupport {
  if (lanes === null || !DEFINED.every((v, i) => lanes[i + 1] === v)) return 'none';
  return lanes[0] === VPDPBUSD ? 'fast' : 'exact';
}
