/**
 * Models whose matrices are in the IQ1–IQ3 / MXFP4 types load and match llama.cpp on the cpu reference and WASM
 * backends: logits vs llama.cpp's exact math (dequantized-F32 rows, F32 KV), vs its normal path, argmax and the greedy
 * continuation, with the conformance suites' tolerances. The models are made at test time by ggml from a committed
 * seed (test/helpers/iq-models.ts); no GGUF is kept. Needs the dev-only oracle (scripts/oracle, `npm install` there):
 * without it the suite is skipped, saying so.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Ops } from '../../src/backend/ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { formatReport } from '../helpers/conformance-suite.js';
import { checkIqModel, HAVE_ORACLE, IQ_MODELS, makeIqModel, writeSeedModel } from '../helpers/iq-models.js';
import { backendTolerances, type ToleranceOverride } from '../helpers/tolerance.js';

/**
 * The backends with their suites' allowances (test/kernels/wasm-model.test.ts): WASM adds 0.5 vs the dequantized-F32
 * rows for the Q8 rounding of activations in its fused kernels (here the Q8_0 embedding / output; the IQ and MXFP4
 * matrices go through dequantized f32 rows).
 */
const BACKENDS: {
  readonly name: string;
  readonly create: () => Ops | Promise<Ops>;
  readonly tol?: ToleranceOverride;
}[] = [
  { name: 'cpu', create: () => createCpuOps() },
  { name: 'wasm', create: () => createWasmOps({ threads: 1 }), tol: backendTolerances(0.5) },
];

describe.skipIf(!HAVE_ORACLE)('IQ / MXFP4 models vs llama.cpp on cpu and wasm (needs scripts/oracle)', () => {
  let dir = '';
  let f32 = '';
  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'webgguf-iq-'));
    f32 = await writeSeedModel(dir);
  }, 120_000);
  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const m of IQ_MODELS) {
    it(`${m.type}: logits, argmax and greedy match llama.cpp's`, async () => {
      const { gguf, ref } = makeIqModel(dir, f32, m);
      for (const backend of BACKENDS) {
        const { report, types } = await checkIqModel(gguf, ref, m, backend.create, backend.tol);
        expect(types.has(m.type), `${m.type} model has ${[...types].join(', ')}`).toBe(true);
        const failed = report.checks.filter((c) => !c.passed).map((c) => `${c.name}: ${c.detail}`);
        console.log(`${backend.name.padEnd(5)} ${formatReport(m.type, report)}`);
        expect(failed, `${backend.name} ${formatReport(m.type, report)}`).toEqual([]);
      }
    }, 300_000);
  }
});
