/**
 * `npm run bench -- embeddings … --profile`: where an embedding model's forward passes spend process CPU time on one
 * backend, op by op (matmuls by weight name with the layer index folded, e.g. `matmul blk.N.ffn_up.weight`). The model
 * is loaded with `loadAnyModel` on a backend wrapped so each call adds its CPU time to a per-op total; the inputs then
 * run as `engine.embeddings.create` runs them (`forEachHiddenStates`: packed passes on an encoder). Pooling and the
 * response shaping are not included (O(tokens · width), next to nothing). Meaningful on WASM and the cpu reference,
 * whose ops run when called.
 */

import type { Ops } from '../../src/backend/ops.js';
import { createBackend } from '../../src/backend/select-backend.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadAnyModel } from '../../src/model/load-any.js';
import { forEachHiddenStates } from '../../src/model/packed-hidden.js';

/** `ops` whose calls add their process CPU ms to `times` by op (matmuls by weight name, layer index folded). */
function profiled(ops: Ops, times: Map<string, number>): Ops {
  return new Proxy(ops, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (typeof v !== 'function') return v;
      return (...a: unknown[]) => {
        const c0 = process.cpuUsage();
        const out = (v as (...args: unknown[]) => unknown).apply(target, a);
        const c = process.cpuUsage(c0);
        const w =
          prop === 'matmul' || prop === 'matmulResidual' || prop === 'gatedFfn'
            ? (a[prop === 'gatedFfn' ? 3 : 2] as { name: string }).name
            : prop === 'normMatmul'
              ? (a[3] as readonly { weight: { name: string } }[])[0]!.weight.name
              : '';
        const key = `${String(prop)}${w ? ` ${w.replace(/\.\d+\./, '.N.')}` : ''}`;
        times.set(key, (times.get(key) ?? 0) + (c.user + c.system) / 1000);
        return out;
      };
    },
  });
}

/** Profiles `inputs` through `model` on `backend` (see the file header); prints the table, returns nothing. */
export async function runEmbeddingProfile(
  model: string,
  backend: 'wasm' | 'cpu',
  threads: number,
  inputs: number[][],
  contextLength: number,
): Promise<void> {
  const times = new Map<string, number>();
  const ops = profiled(await createBackend(backend, { threads }), times);
  const source = await NodeFileSource.open(model);
  const gguf = await parseGguf(source);
  const m = await loadAnyModel(gguf, source, ops, { contextLength });
  try {
    await forEachHiddenStates(m, [inputs[0]!.slice(0, 8)], 0, undefined, () => {}); // first call: not counted
    times.clear();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const pooling = m.config.poolingType; // cls / last: the pooled rows alone after the last attention, as the API
    const rows = pooling === 'cls' || pooling === 'last' ? pooling : undefined;
    await forEachHiddenStates(m, inputs, 0, undefined, () => {}, rows);
    const wall = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    const cpu = (c.user + c.system) / 1e6;
    const tokens = inputs.reduce((s, t) => s + t.length, 0);
    const accounted = [...times.values()].reduce((s, v) => s + v, 0);
    console.log(
      `profile (${ops.description}, ${threads} thread(s)): ${inputs.length} inputs, ${tokens} tokens in ` +
        `${cpu.toFixed(2)} CPU-s (${wall.toFixed(2)} s wall): ${(inputs.length / cpu).toFixed(2)} embeddings/CPU-s`,
    );
    console.log('CPU ms by op:');
    for (const [op, ms] of [...times].sort((a, b) => b[1] - a[1])) {
      console.log(`  ${op.padEnd(48)} ${ms.toFixed(0).padStart(8)}  ${((100 * ms) / (cpu * 1000)).toFixed(1)} %`);
    }
    console.log(`  ${'(outside ops)'.padEnd(48)} ${(cpu * 1000 - accounted).toFixed(0).padStart(8)}`);
  } finally {
    m.destroy();
    await source.close?.();
  }
}
