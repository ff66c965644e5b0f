/**
 * Constrained decoding cost, for `npm run bench`: on one model and backend, decode tok/s with a 20-property JSON
 * schema constraint ÷ unconstrained (same max_tokens, greedy), and schema compile time — the first compile (loads
 * XGrammar and builds the tokenizer info) and a second, different 20-property schema after it. Prints one JSON line.
 * Run: node --experimental-wasm-relaxed-simd scripts/run-ts.mjs test/bench/structured-run.ts '{"modelPath":"…","backend":"wasm","threads":1,"decode":64}'
 */

import { createEngine } from '../../src/api/create-engine.js';
import type { LocalEngine } from '../../src/api/local-engine.js';

/** What to measure. */
export interface StructuredSpec {
  readonly modelPath: string;
  readonly backend: 'wasm' | 'cpu' | 'webgpu';
  readonly threads: number;
  readonly decode: number;
}

/** The figures. */
export interface StructuredResult {
  readonly backend: string;
  readonly threads: number;
  readonly unconstrainedTokPerS: number;
  readonly constrainedTokPerS: number;
  /** constrained ÷ unconstrained decode tok/s. */
  readonly ratio: number;
  readonly firstCompileMs: number;
  /** A different 20-property schema compiled after the first. */
  readonly nextCompileMs: number;
}

function schema20(tag: string): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let i = 0; i < 20; i++)
    properties[`${tag}_${i}`] =
      i % 3 === 0 ? { type: 'integer' } : i % 3 === 1 ? { type: 'string' } : { type: 'boolean' };
  return { type: 'object', properties, required: Object.keys(properties), additionalProperties: false };
}

/** Measures one spec. */
export async function measureStructured(spec: StructuredSpec): Promise<StructuredResult> {
  const engine = (await createEngine({
    model: spec.modelPath,
    backend: spec.backend,
    threads: spec.threads,
    contextLength: 512,
  })) as LocalEngine;
  try {
    const decodeRate = async (extra: Record<string, unknown>): Promise<number> => {
      const t0 = performance.now();
      const r = await engine.completions.create({
        prompt: 'The data:',
        temperature: 0,
        max_tokens: spec.decode,
        ...extra,
      });
      return r.usage.completion_tokens / ((performance.now() - t0) / 1000);
    };
    let t = performance.now();
    await (await engine.grammar()).compile(
      { kind: 'json-schema', schema: JSON.stringify(schema20('a')), strict: true, name: 'a' },
      'response_format',
    );
    const firstCompileMs = performance.now() - t;
    t = performance.now();
    await (await engine.grammar()).compile(
      { kind: 'json-schema', schema: JSON.stringify(schema20('b')), strict: true, name: 'b' },
      'response_format',
    );
    const nextCompileMs = performance.now() - t;
    const rf = {
      response_format: { type: 'json_schema', json_schema: { name: 'a', schema: schema20('a'), strict: true } },
    };
    await decodeRate({}); // warm both paths once
    await decodeRate(rf);
    const unconstrainedTokPerS = await decodeRate({});
    const constrainedTokPerS = await decodeRate(rf);
    return {
      backend: engine.info.backend.description,
      threads: spec.threads,
      unconstrainedTokPerS: Math.round(unconstrainedTokPerS * 10) / 10,
      constrainedTokPerS: Math.round(constrainedTokPerS * 10) / 10,
      ratio: Math.round((constrainedTokPerS / unconstrainedTokPerS) * 100) / 100,
      firstCompileMs: Math.round(firstCompileMs),
      nextCompileMs: Math.round(nextCompileMs),
    };
  } finally {
    await engine.unload();
  }
}

/** Entry for scripts/run-ts.mjs: measures the spec given as JSON and prints the result as one JSON line. */
export async function main(args: string[]): Promise<number> {
  if (!args[0]) {
    console.error('usage: structured-run.ts \'{"modelPath": …, "backend": "wasm", "threads": 1, "decode": 64}\'');
    return 2;
  }
  console.log(JSON.stringify(await measureStructured(JSON.parse(args[0]) as StructuredSpec)));
  return 0;
}
