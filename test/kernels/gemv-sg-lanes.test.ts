/**
 * Lane → address model of the hardware decode GEMV (shaders/kernels/gemv_sg.wgsl, issue 23), checked without a GPU:
 * the kernel's work split restated over the row-split weight layouts (Q4_0, Q8_0, Q5_0, IQ4_NL) for every matmul
 * shape of the Qwen2.5-0.5B, Llama-3.2-1B and 3B models, 32-wide subgroups (and lavapipe's 8, which split K).
 * One subgroup load instruction = one (chunk step, row) of the inner loop over all live lanes; addresses are u32
 * words of the weight binding. Checked: every word of the weights is loaded by exactly one instruction per token
 * (lanes of one instruction reading the same word count once: one transaction), each instruction's quant words form
 * one contiguous span of whole blocks starting at an absolute 16-byte boundary of the binding (and every lane's block
 * too where blocks are whole 16 bytes: Q4_0, Q8_0, IQ4_NL), including K = 896, whose 504-byte Q4_0 rows put every
 * other row 8 bytes off when a row's scales follow its bodies; and loaded ÷ GGUF bytes ≤ 1.01. The addresses are
 * checked against the upload itself (repackRows: each block's body and scale where the model reads them), so a
 * layout that regresses fails here. The model reads ROWS and R from the WGSL, so changing the kernel's split without
 * this model fails here.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  GEMV_SG_ROWS,
  GEMV_SG_ROWS_PER_SUBGROUP,
  GEMV_SG_WG,
  GEMV_SG_WG_SPLIT_K,
} from '../../src/backend/webgpu/gemv-sg-params.js';
import { gemvSgRowsPerSubgroup } from '../../src/backend/webgpu/gemv-sg-quant.js';
import {
  type GpuQuantLayout,
  getGpuQuantLayout,
  partBytes,
  repackRows,
  rowWords,
} from '../../src/backend/webgpu/upload.js';
import { GgmlType } from '../../src/gguf/types.js';

const WGSL = readFileSync(new URL('../../shaders/kernels/gemv_sg.wgsl', import.meta.url), 'utf8');

function wgslConst(pattern: RegExp): number {
  const m = pattern.exec(WGSL);
  if (!m) throw new Error(`gemv_sg.wgsl: no match for ${pattern}`);
  return Number(m[1]);
}

/** Rows one subgroup dots with each chunk of x for the row-split types (their fast dot_chunk). */
const R = GEMV_SG_ROWS_PER_SUBGROUP;

interface Load {
  /** Words each live lane loads, lane by lane. */
  readonly lanes: (readonly number[])[];
}

/** Word of the binding holding block c's scale of row `row` (half 2E − 1 − (row·nb + c), E the binding's words). */
function scaleWord(l: GpuQuantLayout, k: number, nRows: number, row: number, c: number): number {
  const e = partBytes(l, k, nRows) / 4;
  return (2 * e - 1 - (row * (k / 32) + c)) >> 1;
}

/**
 * The loads of one gemv_sg workgroup grid over `nRows` rows of row length `k`, as the kernel issues them: quant
 * loads and scale loads of each (step, row) instruction. Row-split layouts only (every chunk is one block).
 */
function modelLoads(
  l: GpuQuantLayout,
  k: number,
  nRows: number,
  sgSize: number,
  wgSize: number,
): { quants: Load[]; scales: Load[] } {
  const lanes = Math.min(sgSize, wgSize);
  const nSg = Math.max(1, wgSize / lanes);
  const nGroups = GEMV_SG_ROWS / R;
  const ksplit = Math.max(1, Math.floor(nSg / nGroups));
  const nc = k / 32;
  const stride = rowWords(l, k);
  const body = (l.blockBytes - l.headToTail) / 4; // words of one block's quants
  const quants: Load[] = [];
  const scales: Load[] = [];
  for (let row0 = 0; row0 < nRows; row0 += GEMV_SG_ROWS) {
    for (let sg = 0; sg < nSg; sg++) {
      const kpart = Math.floor(sg / nGroups);
      for (let j = 0; j < Math.ceil(nGroups / nSg); j++) {
        const g = (sg % nGroups) + j * nSg;
        if (g >= nGroups || kpart >= ksplit) continue;
        const first = row0 + g * R;
        const nr = first < nRows ? Math.min(R, nRows - first) : 0;
        for (let c0 = kpart * lanes; c0 < nc; c0 += ksplit * lanes) {
          for (let r = 0; r < nr; r++) {
            const base = (first + r) * stride;
            const q: number[][] = [];
            const s: number[][] = [];
            for (let lane = 0; lane < lanes && c0 + lane < nc; lane++) {
              const c = c0 + lane;
              q.push(Array.from({ length: body }, (_, w) => base + body * c + w));
              s.push([scaleWord(l, k, nRows, first + r, c)]);
            }
            quants.push({ lanes: q });
            scales.push({ lanes: s });
          }
        }
      }
    }
  }
  return { quants, scales };
}

/** Times each word was loaded, counting a word once per instruction however many lanes read it. */
function wordCounts(loads: readonly Load[], words: number): Uint8Array {
  const n = new Uint8Array(words); // (words) load count, saturating at 255
  for (const ld of loads) {
    const seen = new Set<number>();
    for (const lane of ld.lanes) for (const w of lane) seen.add(w);
    for (const w of seen) n[w] = Math.min(255, n[w]! + 1);
  }
  return n;
}

interface Shape {
  readonly nEmbd: number;
  readonly nHead: number;
  readonly nHeadKv: number;
  readonly headDim: number;
  readonly nFf: number;
}

const SHAPES: Readonly<Record<string, Shape>> = {
  'qwen2.5-0.5b': { nEmbd: 896, nHead: 14, nHeadKv: 2, headDim: 64, nFf: 4864 },
  'llama-3.2-1b': { nEmbd: 2048, nHead: 32, nHeadKv: 8, headDim: 64, nFf: 8192 },
  'qwen2.5-3b': { nEmbd: 2048, nHead: 16, nHeadKv: 2, headDim: 128, nFf: 11008 },
  'llama-3.2-3b': { nEmbd: 3072, nHead: 24, nHeadKv: 8, headDim: 128, nFf: 8192 },
};

/** Row lengths of a shape's matmuls (q|k|v, gate·up and the output read x of nEmbd; wo and down longer rows). */
function rowLengths(s: Shape): number[] {
  return [...new Set([s.nEmbd, s.nHead * s.headDim, s.nFf])];
}

/**
 * repackRows puts block c of row r where the model reads it: its body at words r·stride + body·c …, its f16 scale in
 * scaleWord's word (half (2E − 1 − h) & 1). The GGUF rows are synthetic: each block's bytes tag (row, block).
 */
function expectUploadMatchesModel(l: GpuQuantLayout, k: number, nRows: number): void {
  const nb = k / 32;
  const bb = l.blockBytes;
  const src = new Uint8Array(nRows * nb * bb); // (nRows, nb) GGUF blocks: scale = h, body bytes = h·7 + j
  for (let h = 0; h < nRows * nb; h++) {
    src[h * bb] = h & 0xff;
    src[h * bb + 1] = h >> 8;
    for (let j = 2; j < bb; j++) src[h * bb + j] = (h * 7 + j) & 0xff;
  }
  const dst = repackRows(l, src, k, { rowStart: 0, nRows });
  expect(dst.byteLength).toBe(partBytes(l, k, nRows));
  const e = dst.byteLength / 4;
  const body = bb - l.headToTail;
  const bad: string[] = [];
  for (let r = 0; r < nRows; r++) {
    for (let c = 0; c < nb; c++) {
      const h = r * nb + c;
      const at = (r * rowWords(l, k) + (body / 4) * c) * 4;
      for (let j = 0; j < body; j++) if (dst[at + j] !== ((h * 7 + j + 2) & 0xff)) bad.push(`body ${r},${c}`);
      const half = 4 * scaleWord(l, k, nRows, r, c) + 2 * ((2 * e - 1 - h) & 1);
      if (dst[half] !== (h & 0xff) || dst[half + 1] !== h >> 8) bad.push(`scale ${r},${c}`);
    }
  }
  expect(bad.slice(0, 5), `${l.name} k ${k}`).toEqual([]);
}

const TYPES = [GgmlType.Q4_0, GgmlType.Q8_0, GgmlType.Q5_0, GgmlType.IQ4_NL];

describe('gemv_sg lane → address model', () => {
  it('reads the split constants from the WGSL the host dispatches with', () => {
    expect(wgslConst(/override ROWS: u32 = (\d+)u;/)).toBe(GEMV_SG_ROWS);
    expect(wgslConst(/override R: u32 = (\d+)u;/)).toBe(R);
    expect(wgslConst(/const MAX_R: u32 = (\d+)u;/)).toBeGreaterThanOrEqual(R);
    expect(GEMV_SG_ROWS % R).toBe(0);
    expect(R).toBeGreaterThan(1); // several rows per subgroup share each chunk of x
  });

  for (const [name, shape] of Object.entries(SHAPES)) {
    for (const type of TYPES) {
      it(`${name} ${GgmlType[type]}: every weight word loaded once per token, quant spans contiguous and 16-byte aligned`, () => {
        const l = getGpuQuantLayout(type, 'w', 'hardware');
        expect(l.rowSplit).toBe(true);
        expect(gemvSgRowsPerSubgroup(l)).toBe(R);
        for (const k of rowLengths(shape)) {
          // Rows: two whole workgroups and a partial one (the pattern repeats per workgroup).
          const nRows = 2 * GEMV_SG_ROWS + R + 1;
          const stride = rowWords(l, k);
          const body = (l.blockBytes - l.headToTail) / 4;
          expectUploadMatchesModel(l, k, nRows);
          // Both workgroup sizes the host picks (gemvSgWorkgroupSize), on 32- and 8-wide subgroups.
          for (const [sgSize, wgSize] of [32, 8].flatMap((sg) =>
            [GEMV_SG_WG, GEMV_SG_WG_SPLIT_K].map((wg) => [sg, wg]),
          )) {
            const { quants, scales } = modelLoads(l, k, nRows, sgSize!, wgSize!);
            const counts = wordCounts([...quants, ...scales], partBytes(l, k, nRows) / 4);
            const wrong = counts.findIndex((c) => c !== 1);
            expect(wrong, `k ${k}, subgroup ${sgSize}: word ${wrong} loaded ${counts[wrong]}×`).toBe(-1);
            const bad: string[] = []; // collected, not asserted per word: the models hold ~10⁵ loads
            for (const ld of quants) {
              const words = ld.lanes.flat();
              if (words.length !== ld.lanes.length * body) bad.push('a lane loads a partial block');
              for (let i = 1; i < words.length; i++)
                if (words[i]! - words[i - 1]! !== 1) bad.push(`gap at ${words[i]}`);
              // absolute: the binding starts 16-byte aligned (a buffer, or a group member at a 256-byte offset)
              if ((words[0]! * 4) % 16 !== 0) bad.push(`span at byte ${words[0]! * 4}`);
              if (body % 4 === 0)
                for (const lane of ld.lanes) if ((lane[0]! * 4) % 16 !== 0) bad.push(`block at byte ${lane[0]! * 4}`);
            }
            for (const ld of scales) {
              const words = [...new Set(ld.lanes.flat())].sort((a, b) => a - b);
              for (let i = 1; i < words.length; i++)
                if (words[i]! - words[i - 1]! !== 1) bad.push(`scale gap ${words[i]}`);
            }
            expect(bad.slice(0, 5), `k ${k}, subgroup ${sgSize}, workgroup ${wgSize}`).toEqual([]);
          }
          const ggufBytes = (k / l.blockElements) * l.blockBytes;
          expect(partBytes(l, k, nRows) / (nRows * ggufBytes)).toBeLessThanOrEqual(1.01);
          expect((stride * 4) % 16, `k ${k}: row stride ${stride * 4} bytes`).toBe(0);
        }
      });
    }
  }
});
