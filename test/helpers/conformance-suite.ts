/**
 * The reusable conformance driver: for every shared model with a llama.cpp reference, load it on a backend made by
 * `createOps`, feed `eval_input`, compare logits (tolerance table in tolerance.ts), argmax and — for stories260K and
 * models/derived — the 30 greedy tokens. A backend's test file is a few lines:
 *
 *   import { runConformanceSuite } from '../helpers/conformance-suite.js';
 *   import { createWasmOps } from '../../src/backend/wasm/index.js';
 *   runConformanceSuite('wasm', () => createWasmOps(), { tolerances: backendTolerances(0.01) });
 */

import { describe, expect, it } from 'vitest';
import type { Ops } from '../../src/backend/ops.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { checkConformance, classifyWeights, type ConformanceReport } from '../../src/model/conformance.js';
import { loadTransformer } from '../../src/model/load.js';
import { listReferenceFixtures, loadReferenceJson, type ReferenceFixture } from './reference-json.js';
import { tolerancesFor, type ToleranceOverride } from './tolerance.js';

/** Options of the suite. */
export interface ConformanceSuiteOptions {
  /** Adjusts the reference tolerance table for this backend. */
  readonly tolerances?: ToleranceOverride;
  /** Only fixtures whose id passes (e.g. skip a type the backend lacks, with a reason in the test file). */
  readonly filter?: (fixture: ReferenceFixture) => boolean;
  /** Tokens per step (default: whole prompt in one step). Small values exercise chunking. */
  readonly ubatchSize?: number;
  /** Called with each report (e.g. to print a table). */
  readonly onReport?: (fixture: ReferenceFixture, report: ConformanceReport) => void;
}

/** Loads one fixture on a fresh backend and runs the conformance checks; always destroys the backend. */
async function runFixtureConformance(
  fixture: ReferenceFixture,
  createOps: () => Ops | Promise<Ops>,
  options: Omit<ConformanceSuiteOptions, 'filter' | 'onReport'> = {},
): Promise<ConformanceReport> {
  const ref = loadReferenceJson(fixture.referencePath);
  const source = await NodeFileSource.open(fixture.ggufPath);
  const ops = await createOps();
  try {
    const gguf = await parseGguf(source);
    const arch = String(gguf.metadata['general.architecture']);
    const tolerances = tolerancesFor({ weights: classifyWeights(gguf), arch, id: fixture.id }, options.tolerances);
    const greedyN = ref.greedy_kv_f32?.tokens.length ?? 0;
    const model = await loadTransformer(gguf, source, ops, {
      contextLength: ref.eval_input.length + greedyN + 1,
      ubatchSize: options.ubatchSize ?? 512,
    });
    return await checkConformance(model, ref, { tolerances, greedy: fixture.requireGreedy ? 'exact' : 'near-tie' });
  } finally {
    ops.destroy();
    await source.close?.();
  }
}

/** One line per report, for logs. */
export function formatReport(id: string, r: ConformanceReport): string {
  const e = (x: number | null): string => (x === null ? '   —   ' : x.toExponential(2));
  const tie = r.greedyDivergenceMargin === null ? '' : ` (then near-tie gap ${r.greedyDivergenceMargin.toFixed(3)})`;
  const greedy = r.greedyTokens ? `${r.greedyPrefix}/${r.greedyTokens.length}${tie}` : '—';
  return `${id.padEnd(34)} deq ${e(r.maxAbsDequantF32)}  kvf32 ${e(r.maxAbsKvF32)}  argmax ${r.argmaxAgree}/${r.positions} (decisive ${r.argmaxDecisiveAgree}/${r.argmaxDecisive})  greedy ${greedy}`;
}

/** Registers one vitest test per fixture for the backend made by `createOps`. */
export function runConformanceSuite(
  name: string,
  createOps: () => Ops | Promise<Ops>,
  options: ConformanceSuiteOptions = {},
): void {
  const fixtures = listReferenceFixtures().filter(options.filter ?? (() => true));
  describe(`conformance vs llama.cpp: ${name} backend`, () => {
    it('finds the shared fixtures', () => {
      expect(fixtures.length).toBeGreaterThan(0);
    });
    for (const fixture of fixtures) {
      it(fixture.id, async () => {
        const report = await runFixtureConformance(fixture, createOps, options);
        options.onReport?.(fixture, report);
        const failed = report.checks.filter((c) => !c.passed).map((c) => `${c.name}: ${c.detail}`);
        expect(failed, formatReport(fixture.id, report)).toEqual([]);
      });
    }
  });
}
