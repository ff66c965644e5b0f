/**
 * Shared-memory bank model of the prefill GEMM tile (issue 23), without a GPU: the index expressions are read from
 * shaders/kernels/gemm.wgsl itself (the staging stores through `tile_index` and the inner loop's `tile_w` / `tile_x`
 * reads), evaluated for every lane of a workgroup with the overrides of each tile the host dispatches (GEMM_TILES), and mapped onto 32 banks of
 * 4 bytes. A vec4 access is served in phases of 8 lanes (128 bytes, as NVIDIA and AMD split 16-byte shared-memory
 * accesses); within a phase, lanes reading the same address share it (broadcast) and different addresses on one bank
 * serialise. Every access of the tile must be conflict-free (degree 1). The model is checked against the layout the
 * kernel had before (4 consecutive rows per lane: 4-way conflicts), so a model that sees nothing cannot pass.
 */

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { GEMM_TILES, type GemmTile } from '../../src/backend/webgpu/matmul-ops.js';

const SRC = readFileSync(path.resolve(import.meta.dirname, '../../shaders/kernels/gemm.wgsl'), 'utf8');
const BANKS = 32;
const PHASE_LANES = 8; // lanes per 128-byte phase of a 16-byte access

type Env = Record<string, number>;

/** The overrides the host sets for a tile (matmul-ops.ts). */
function gemmOverrides(t: GemmTile): Env {
  return { WG_SIZE: t.wgSize, GX: t.gx, TT: t.tt };
}

/** A WGSL u32 expression of identifiers, literals, + − · ÷ % and parentheses as a JS function of `env`. */
function compile(expr: string): (env: Env) => number {
  const js = expr
    .replace(/(\d+)u\b/g, '$1')
    .replace(/\b([A-Za-z_]\w*|\d+)\s*\/\s*([A-Za-z_]\w*|\d+)/g, 'Math.floor($1 / $2)')
    .replace(/\b([A-Za-z_]\w*)\b/g, (m) => (m === 'Math' || m === 'floor' ? m : `env.${m}`));
  return new Function('env', `return ${js};`) as (env: Env) => number;
}

/** The kernel's `const` and `override` values, evaluated in order: the host's overrides, else the defaults. */
function constants(host: Env): Env {
  const env: Env = { ...host };
  for (const m of SRC.matchAll(/^(?:const|override)\s+(\w+)\s*:\s*u32\s*=\s*([^;]+);/gm)) {
    env[m[1]!] = host[m[1]!] ?? compile(m[2]!)(env);
  }
  return env;
}

/** The body of the first `for` loop over `variable` (brace-matched). */
function loopBody(variable: string): string {
  const at = SRC.indexOf(`for (var ${variable} = `);
  expect(at, `loop over ${variable} in gemm.wgsl`).toBeGreaterThan(0);
  let depth = 0;
  for (let i = SRC.indexOf('{', at); i < SRC.length; i++) {
    if (SRC[i] === '{') depth++;
    else if (SRC[i] === '}' && --depth === 0) return SRC.slice(SRC.indexOf('{', at) + 1, i);
  }
  throw new Error('unbalanced loop');
}

/** Index expressions of `array[…]` accesses in a piece of WGSL. */
function accesses(src: string, array: string): string[] {
  return [...src.matchAll(new RegExp(`${array}\\[([^\\]]+)\\]`, 'g'))].map((m) => m[1]!);
}

/** Worst bank-conflict degree of a vec4 access whose vec4 index per lane is `at(lid)`, over all phases. */
function conflictDegree(at: (lid: number) => number, wgSize: number): number {
  let worst = 1;
  for (let p0 = 0; p0 < wgSize; p0 += PHASE_LANES) {
    const perBank = new Map<number, Set<number>>();
    for (let lid = p0; lid < p0 + PHASE_LANES; lid++) {
      for (let c = 0; c < 4; c++) {
        const word = at(lid) * 4 + c;
        const bank = word % BANKS;
        const set = perBank.get(bank) ?? new Set<number>();
        set.add(word);
        perBank.set(bank, set);
      }
    }
    for (const s of perBank.values()) worst = Math.max(worst, s.size);
  }
  return worst;
}

/** Conflict degree of an inner-loop read for every k4 and token step, lanes mapped to (tx, ty) as the kernel does. */
function readDegree(expr: string, env: Env): number {
  const f = compile(expr);
  let worst = 1;
  for (let k4 = 0; k4 < env.K4!; k4++) {
    for (let i = 0; i < env.TT!; i++) {
      const lane = (lid: number): number => f({ ...env, lid, tx: lid % env.GX!, ty: Math.floor(lid / env.GX!), k4, i });
      worst = Math.max(worst, conflictDegree(lane, env.WG_SIZE!));
    }
  }
  return worst;
}

const DEFAULTS = constants({ WG_SIZE: 64 });

describe('gemm tile bank model', () => {
  it('reads the kernel constants and its four weight-row and one activation reads', () => {
    expect(DEFAULTS).toMatchObject({ GX: 8, TT: 4, KT: 32, K4: 8, P4: 9, BR: 32, BT: 32 });
    expect(GEMM_TILES.map((t) => constants(gemmOverrides(t)))).toMatchObject([
      { BR: 32, BT: 32 },
      { BR: 64, BT: 64 },
    ]);
    const body = loopBody('k4');
    expect(accesses(body, 'tile_w')).toHaveLength(4);
    expect(accesses(body, 'tile_x')).toHaveLength(1);
  });

  for (const tile of GEMM_TILES) {
    const env = constants(gemmOverrides(tile));
    const name = `${env.BR} × ${env.BT} tile, ${tile.wgSize} invocations`;

    it(`${name}: every inner-loop read of tile_w and tile_x is conflict-free`, () => {
      const body = loopBody('k4');
      for (const e of [...accesses(body, 'tile_w'), ...accesses(body, 'tile_x')]) {
        expect({ expr: e, degree: readDegree(e, env) }).toEqual({ expr: e, degree: 1 });
      }
    });

    it(`${name}: the staging stores are conflict-free, within the kernel's per-invocation load bound`, () => {
      const fn = /fn tile_index\(idx: u32\) -> u32 \{\s*return ([^;]+);/.exec(SRC);
      expect(fn, 'tile_index in gemm.wgsl').not.toBeNull();
      const slot = compile(fn![1]!);
      const stores = SRC.match(/tile_[wx]\[tile_index\(([^)]+)\)\]/g) ?? [];
      expect(stores).toHaveLength(2);
      const wg = env.WG_SIZE!;
      for (const rows of [env.BR!, env.BT!]) {
        expect((rows * env.K4!) % wg).toBe(0);
        expect((rows * env.K4!) / wg).toBeLessThanOrEqual(env.MAX_LD!);
        for (let l = 0; l < (rows * env.K4!) / wg; l++) {
          expect(conflictDegree((lid) => slot({ ...env, idx: lid + l * wg }), wg)).toBe(1);
        }
      }
      expect(env.TT).toBeLessThanOrEqual(env.MAX_TT!);
    });
  }

  it('the model sees the conflicts of 4 consecutive rows per lane (the previous layout)', () => {
    expect(readDegree('(tx * 4u + 1u) * P4 + k4', DEFAULTS)).toBe(4);
    expect(readDegree('(tx + 1u * GX) * P4 + k4', DEFAULTS)).toBe(1);
  });
});
