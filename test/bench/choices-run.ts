/**
 * Batched choices, for `npm run bench`, in Node: choices-measure.ts on one model and backend, timed by this process's
 * CPU clock (steady on a shared machine; one thread = one core) and wall clock. Prints one JSON line.
 * Run: node --experimental-wasm-relaxed-simd scripts/run-ts.mjs test/bench/choices-run.ts '{"modelPath":"…","backend":"wasm","threads":1,"decode":32,"n":4}'
 */

import { createEngine } from '../../src/api/create-engine.js';
import type { LocalEngine } from '../../src/api/local-engine.js';
import { type ChoicesResult, type ChoicesSpec, measureChoicesOn } from './choices-measure.js';

/** Measures one spec. */
export async function measureChoices(spec: ChoicesSpec): Promise<ChoicesResult> {
  const engine = (await createEngine({
    model: spec.modelPath,
    backend: spec.backend,
    threads: spec.threads,
    contextLength: 256,
    slots: spec.n,
  })) as LocalEngine;
  try {
    const cpuMs = (): number => {
      const c = process.cpuUsage();
      return (c.user + c.system) / 1000;
    };
    return await measureChoicesOn(engine, spec, { cpuMs, wallMs: () => performance.now() }, 'node');
  } finally {
    await engine.unload();
  }
}

/** Entry for scripts/run-ts.mjs: measures the spec given as JSON and prints the result as one JSON line. */
export async function main(args: string[]): Promise<number> {
  if (!args[0]) {
    console.error('usage: choices-run.ts \'{"modelPath": …, "backend": "wasm", "threads": 1, "decode": 32, "n": 4}\'');
    return 2;
  }
  console.log(JSON.stringify(await measureChoices(JSON.parse(args[0]) as ChoicesSpec)));
  return 0;
}
