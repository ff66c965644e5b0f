/**
 * Batched choices in the benchmark page (test/bench/browser-choices.ts drives it): choices-measure.ts on our WASM
 * backend with the kernel build this Chromium picks (the relaxed-dot build where the dot-add is AVX-VNNI's), timed by
 * the renderer's CPU clock that the Node side exposes to the page (`webggufRendererCpuMs`) and by the page's wall clock.
 */

import { createEngine } from '../../../src/api/create-engine.js';
import type { LocalEngine } from '../../../src/api/local-engine.js';
import { type ChoicesResult, measureChoicesOn } from '../choices-measure.js';

/** What the Node side passes. */
export interface ChoicesPageSpec {
  readonly modelUrl: string;
  readonly threads: number;
  readonly decode: number;
  readonly n: number;
  readonly repeats?: number;
}

declare global {
  interface Window {
    /** CPU milliseconds of the page's renderer process so far (exposed by browser-choices.ts). */
    webggufRendererCpuMs?: () => Promise<number>;
  }
}

/** Loads the model from its URL into an engine with n slots and measures the n = 1 and n rates. */
export async function choices(spec: ChoicesPageSpec): Promise<ChoicesResult> {
  const res = await fetch(spec.modelUrl);
  if (!res.ok) throw new Error(`fetching ${spec.modelUrl}: HTTP ${res.status}`);
  const engine = (await createEngine({
    model: new File([await res.blob()], 'model.gguf'),
    backend: 'wasm',
    threads: spec.threads,
    contextLength: 256,
    slots: spec.n,
  })) as LocalEngine;
  const cpu = window.webggufRendererCpuMs;
  try {
    return await measureChoicesOn(
      engine,
      spec,
      { cpuMs: cpu ? () => cpu() : () => performance.now(), wallMs: () => performance.now() },
      'chromium',
    );
  } finally {
    await engine.unload();
  }
}
