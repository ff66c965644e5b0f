/**
 * Page side of relaxed-dot.spec.ts: which dot-add lowering this Chromium has, and — where the relaxed-dot kernel
 * build runs — its matmuls against the relaxed-simd build's on the same weights and activations, bit for bit.
 * Exposes `window.webggufRelaxedDot`.
 */

import type { Ops } from '../../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../../src/backend/wasm/index.js';
import { GgmlType } from '../../../src/gguf/types.js';
import { getQuantType } from '../../../src/quant/index.js';
import { mulberry32 } from '../../helpers/mulberry32.js';

/** One comparison: the quant type, shape and the number of outputs that differ (Object.is) between the builds. */
interface Mismatch {
  readonly type: string;
  readonly rows: number;
  readonly k: number;
  readonly n: number;
  readonly threads: number;
  readonly differing: number;
  readonly outputs: number;
}

/** Quant types whose WASM kernels read Q8 activations (the integer tiles the relaxed-dot build changes). */
const TYPES = [GgmlType.Q8_0, GgmlType.Q4_0, GgmlType.Q5_0, GgmlType.Q4_K, GgmlType.Q5_K, GgmlType.Q6_K];

function randomF32(n: number, seed: number, scale: number): Float32Array {
  const r = mulberry32(seed);
  return Float32Array.from({ length: n }, () => (r() * 2 - 1) * scale);
}

async function matmul(
  ops: Ops,
  type: GgmlType,
  bytes: Uint8Array,
  k: number,
  rows: number,
  x: Float32Array,
  n: number,
) {
  const w = await ops.uploadWeight({ name: `w${type}-${k}x${rows}`, type, shape: [k, rows] }, bytes);
  const xa = ops.createActivation('x', n, k);
  const out = ops.createActivation('out', n, rows);
  ops.beginStep({ tokens: new Int32Array(n), startPos: 0, slot: 0 });
  ops.setRows(xa, x, n);
  ops.matmul(out, xa, w, n);
  ops.endStep();
  return ops.read(out, n);
}

async function compare(): Promise<{ dotAdd: string; variant: WasmVariant; results: Mismatch[] }> {
  const features = detectWasmFeatures();
  const results: Mismatch[] = [];
  const threadCounts = features.threads ? [1, 2] : [1];
  if (features.dotAdd !== 'fast') return { dotAdd: features.dotAdd, variant: 'relaxed-simd', results };
  for (const threads of threadCounts) {
    const dot = await createWasmOps({ variant: 'relaxed-dot', threads });
    const ref = await createWasmOps({ variant: 'relaxed-simd', threads });
    for (const type of TYPES) {
      const q = getQuantType(type);
      const k = 2 * 256;
      for (const rows of [1, 3, 5, 37, 131]) {
        const wf = randomF32(rows * k, rows * 7 + type, 1);
        // Every byte value in Q8_0's quants: a few rows scaled so their largest weight is far above the rest.
        for (let i = 0; i < wf.length; i += 97) wf[i] = (wf[i] as number) * 40;
        const bytes = new Uint8Array((rows * k * q.blockBytes) / q.blockElements);
        q.quantizeRow?.(wf, bytes);
        for (const n of [1, 3, 4, 7, 8, 9, 13, 33]) {
          const x = randomF32(n * k, n * 131 + rows, 3);
          const a = await matmul(dot, type, bytes, k, rows, x, n);
          const b = await matmul(ref, type, bytes, k, rows, x, n);
          let differing = 0;
          for (let i = 0; i < a.length; i++) if (!Object.is(a[i], b[i])) differing++;
          results.push({ type: q.name, rows, k, n, threads, differing, outputs: a.length });
        }
      }
    }
    dot.destroy();
    ref.destroy();
  }
  return { dotAdd: features.dotAdd, variant: 'relaxed-dot', results };
}

declare global {
  interface Window {
    webggufRelaxedDot: { compare: typeof compare };
  }
}

window.webggufRelaxedDot = { compare };
document.title = 'relaxed-dot ready';
