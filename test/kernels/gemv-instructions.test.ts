/**
 * Instructions per weight of the hardware decode GEMV's inner loop (issue 23), counted statically from the WGSL
 * (test/helpers/wgsl-op-count.ts: operators, builtin calls and storage reads, helper functions inlined, constant loops
 * unrolled; a vector operation counts once). For every quant type whose row-split snippet has its own `dot_chunk`
 * (registry `webgpu.chunkDot`): the chunk form decodes the block's scale once and loads its quant words once, so it
 * must cost at most MAX_OPS_PER_WEIGHT operations per weight and at most MAX_RATIO of the same snippet's element-wise
 * `load4` path (a scale decode and a word load per 4 weights, what gemv_sg did before). The prefill GEMM's inner loop
 * is counted per multiply-add.
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GEMV_SG_ROWS_PER_SUBGROUP } from '../../src/backend/webgpu/gemv-sg-params.js';
import { gemvShape } from '../../src/backend/webgpu/gemv-shape.js';
import { QUANT_TYPES } from '../../src/quant/index.js';
import { countOps } from '../helpers/wgsl-op-count.js';

const SHADERS = path.resolve(import.meta.dirname, '../../shaders');
const read = (p: string): string => readFileSync(path.join(SHADERS, p), 'utf8');
const BITS = read('common/bits.wgsl');
const MAX_OPS_PER_WEIGHT = 5;
/** Q4_0 0.37, Q8_0 0.40, IQ4_NL 0.38, Q5_0 0.53 of their load4 paths when this was written. */
const MAX_RATIO = 0.6;

const chunkTypes = QUANT_TYPES.filter((q) => q.webgpu?.chunkDot === true);

describe('hardware GEMV instructions per weight', () => {
  it('covers the types with a chunk dot (Q4_0, Q8_0 at least)', () => {
    const names = chunkTypes.map((q) => q.name);
    expect(names).toEqual(expect.arrayContaining(['Q4_0', 'Q8_0']));
  });

  for (const q of chunkTypes) {
    it(`${q.name}: dot_chunk ≤ ${MAX_OPS_PER_WEIGHT} operations per weight and ≤ ${MAX_RATIO} × the load4 path`, () => {
      const snippet = `quant/${q.webgpu!.snippet}${q.webgpu!.hardwareRows ? '_rows' : ''}.wgsl`;
      const src = BITS + read(snippet);
      const chunk = countOps(src, 'dot_chunk') / 32;
      const perLoad4 = countOps(src, 'load4') / 4;
      console.log(`[gemv ops] ${q.name}: dot_chunk ${chunk.toFixed(2)} / weight, load4 path ${perLoad4.toFixed(2)}`);
      expect(chunk).toBeLessThanOrEqual(MAX_OPS_PER_WEIGHT);
      expect(chunk).toBeLessThanOrEqual(perLoad4 * MAX_RATIO);
    });
  }

  // The Q8-activation variant (dot4I8Packed): per weight, the chunk's integer dot plus the chunk's quantisation of x
  // shared by the R rows of a row group (Q4_0 1.59, Q8_0 1.68 when this was written). The counter counts a vec4
  // float op once, like one dot4I8Packed, so the f32 chunk's four-wide multiply-adds look as cheap as the packed
  // integer dot here; the integer chunk alone still costs less.
  for (const name of ['q4_0', 'q8_0']) {
    it(`${name}: dot_chunk_q8 below the f32 dot_chunk, ≤ 1.75 operations per weight with x's quantisation`, () => {
      const src =
        BITS + read(`quant/${name}_rows.wgsl`) + read('common/x_q8.wgsl') + read(`quant/${name}_rows_dot4.wgsl`);
      const r = GEMV_SG_ROWS_PER_SUBGROUP;
      const chunk = countOps(src, 'dot_chunk_q8') / 32;
      const q8 = chunk + countOps(src, 'quantize_chunk') / r / 32;
      const f32 = countOps(src, 'dot_chunk') / 32;
      console.log(
        `[gemv ops] ${name} Q8 activations: ${q8.toFixed(2)} / weight, chunk alone ${chunk.toFixed(2)} (f32 activations ${f32.toFixed(2)})`,
      );
      // the same weight words and scale as the f32 chunk, each loaded once
      expect(countOps(src, 'dot_chunk_q8', 'loads')).toBe(countOps(src, 'dot_chunk', 'loads'));
      expect(chunk).toBeLessThan(f32);
      expect(q8).toBeLessThanOrEqual(1.75);
    });
  }

  it('the counter sees a regression: a chunk that decodes its scale per 4 weights costs as much as load4', () => {
    const src = `${BITS + read('quant/q4_0_rows.wgsl')}
fn slow_chunk(base: u32, c: u32, xv: array<vec4<f32>, 8>) -> f32 {
  var s = 0.0;
  for (var j = 0u; j < 8u; j++) { s += dot(load4(base, c * 32u + 4u * j), xv[j]); }
  return s;
}`;
    expect(countOps(src, 'slow_chunk') / 32).toBeGreaterThan(countOps(src, 'dot_chunk') / 16);
  });
});

describe('prefill GEMM shared-memory reads per multiply-add', () => {
  it('the k4 loop reads ≤ 0.25 tile values per multiply-add (4 rows × TT tokens × 4 k from 4 + TT vec4 reads)', () => {
    const src = read('kernels/gemm.wgsl');
    const loop = /for \(var k4 = 0u; k4 < K4; k4\+\+\) \{([\s\S]*?)\n {4}\}\n/.exec(src);
    expect(loop, 'the k4 loop of gemm.wgsl').not.toBeNull();
    const tt = 4; // the default TT: the token loop runs TT times
    const body = `fn k4_body() {${loop![1]!.replace('i < TT', `i < ${tt}u`)}}`;
    const reads = countOps(body, 'k4_body', 'loads');
    const macs = 4 * tt * 4;
    console.log(`[gemm] ${reads} vec4 tile reads per ${macs} multiply-adds`);
    expect(reads).toBe(4 + tt);
    expect(reads / macs).toBeLessThanOrEqual(0.25);
  });
});

/**
 * gemv, the hardware GEMV without subgroups (Firefox, Safari): its K loop (a chunk of x' loaded once, dotted with R
 * rows through dot_chunk) against the loop it replaced (one load4 and one x4 per 4 weights of one row, a workgroup per
 * row), per weight, and the barriers it spends per output row (the old one: a log2 tree of workgroupBarrier per
 * reduction — norm, row, GLU up row — for each single row).
 */
describe('hardware GEMV without subgroups (gemv): instructions per weight and barriers per row', () => {
  const IO = read('common/gemv_io.wgsl');
  const GEMV = read('kernels/gemv.wgsl');
  const R_ROWS = 4; // R of the types with a fast dot_chunk (gemvSgRowsPerSubgroup)
  /** The K-loop body of gemv.wgsl (the GLU's up row left out on both sides), R unrolled to `r`, as a function. */
  const newLoop = (r: number): string => {
    const m = /for \(var c = j; c < nc; c \+= tpg\) \{([\s\S]*?)\n {4}\}\n/.exec(GEMV);
    expect(m, 'the chunk loop of gemv.wgsl').not.toBeNull();
    const body = m![1]!.replace('r < R', `r < ${r}u`).replace(/if \(IS_GLU\) \{[^\n]*\}/g, '');
    return `fn new_chunk() {${body}}`;
  };
  /**
   * What gemv's loop did before: 4 weights of one row per step, each step loading and scaling its own 4 x'; and, with
   * HAS_NORM, a separate Σx² pass over x per workgroup, i.e. per row (the new loop adds x² as it loads each chunk).
   * Both counted with the norm (the fused Q|K|V and gate·up dispatches; the count takes every `if` body).
   */
  const OLD_LOOP =
    'fn old_step() { acc += dot(load4(base, i), x4(xb, i)); }\nfn old_norm() { ss += x[xb + i] * x[xb + i]; }';
  const snippetOf = (q: (typeof QUANT_TYPES)[number]): string =>
    q.webgpu!.chunkDot
      ? read(`quant/${q.webgpu!.snippet}${q.webgpu!.hardwareRows ? '_rows' : ''}.wgsl`)
      : `${read(`quant/${q.webgpu!.snippet}.wgsl`)}\n${read('common/dot_chunk.wgsl')}`;

  const typeNames = [...chunkTypes.map((q) => q.name), 'Q4_K', 'Q6_K'];
  for (const name of typeNames) {
    const q = QUANT_TYPES.find((t) => t.name === name)!;
    const r = q.webgpu!.chunkDot ? R_ROWS : 1;
    it(`${name}: the chunk loop (R = ${r}) costs ≤ ${r > 1 ? MAX_RATIO : 1} × the old per-4-weights loop per weight`, () => {
      const src = `${BITS}${snippetOf(q)}\n${IO}\n${GEMV}\n${newLoop(r)}\n${OLD_LOOP}`;
      const now = countOps(src, 'new_chunk') / (32 * r);
      const before = countOps(src, 'old_step') / 4 + countOps(src, 'old_norm');
      console.log(`[gemv nosg ops] ${name}: ${now.toFixed(2)} / weight (R = ${r}), before ${before.toFixed(2)}`);
      expect(now).toBeLessThanOrEqual(before * (r > 1 ? MAX_RATIO : 1));
    });
  }

  /** Barriers of one workgroup: the kernel's own, plus the tree of reduce_shared.wgsl per wg_* call. */
  const barriersOf = (fnBody: string, wgSize: number): number => {
    const reduce = read('common/reduce_shared.wgsl');
    const tree = /fn wg_reduce[\s\S]*?\n\}/.exec(reduce)![0];
    const inLoop = (/for \([^)]*\) \{[\s\S]*?\n {2}\}/.exec(tree)![0].match(/workgroupBarrier\(\)/g) ?? []).length;
    const perReduction = (tree.match(/workgroupBarrier\(\)/g) ?? []).length + inLoop * (Math.log2(wgSize) - 1);
    const own = (fnBody.match(/workgroupBarrier\(\)/g) ?? []).length;
    return own + (fnBody.match(/\bwg_(sum|max|min)\(/g) ?? []).length * perReduction;
  };
  /** gemv's main before the rewrite (issue 23): norm, row and up-row reductions, one row per workgroup. */
  const OLD_MAIN =
    'if (HAS_NORM) { f = 1.0 / sqrt(wg_sum(ss, ids) / f32(p.k) + p.eps); } var y = wg_sum(acc, ids) * f; ' +
    'if (IS_GLU) { y = act(y) * (wg_sum(up, ids) * f); }';

  it('≤ 2 barriers per workgroup (≤ 0.5 per row: ROWS ≥ 4), whatever the fusions; the old kernel: 24 per row', () => {
    const main = /fn main\([\s\S]*$/.exec(GEMV)![0];
    expect(main).not.toMatch(/\bwg_(sum|max|min)\(/);
    const perWorkgroup = barriersOf(main, 64);
    const old = barriersOf(OLD_MAIN, 64);
    console.log(`[gemv nosg barriers] ${perWorkgroup} per workgroup of ≥ 4 rows; before: ${old} per row`);
    expect(old).toBe(24);
    expect(perWorkgroup).toBeLessThanOrEqual(2);
    for (const [rows, k] of [
      [1152, 896],
      [896, 4864],
      [151936, 896],
      [3072, 2048],
      [2048, 8192],
      [128256, 2048],
    ] as const) {
      for (const r of [1, R_ROWS]) expect(perWorkgroup / gemvShape(rows, k, r).rows).toBeLessThanOrEqual(2 / r);
    }
  });
});
