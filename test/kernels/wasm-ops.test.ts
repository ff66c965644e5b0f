/**
 * Every non-matmul op of the WASM backend vs the plain-TS reference backend (createCpuOps): embed (f32 and
 * quantized tables), rmsNorm (whole row, per-head groups, with/without weight), rope (norm, neox, partial rotary,
 * frequency factors, YaRN), storeKv + attention (GQA, sliding window, soft-capping, several steps), glu silu/gelu,
 * add, scale, softcap, copyRows, read, argmax, topK, copyKv, and the error paths. These ops are f32 on both sides,
 * so the tolerance is f32 rounding (1e-5 relative); matmul is covered by wasm-matmul.test.ts. Runs the scalar and
 * simd128 builds single-threaded and the best build (relaxed-simd when this Node has it) with two threads.
 */

import { describe, expect, it } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { Activation, Ops, RopeParams, Weight } from '../../src/backend/ops.js';
import { createWasmOps, detectWasmFeatures, type WasmVariant } from '../../src/backend/wasm/index.js';
import { WasmHeap } from '../../src/backend/wasm/wasm-heap.js';
import { isLlmError } from '../../src/errors.js';
import { GgmlType } from '../../src/gguf/types.js';
import { getQuantType } from '../../src/quant/index.js';
import { mulberry32 } from '../helpers/mulberry32.js';
import { uniformKvLayers } from '../helpers/kv-layers.js';

/** Deterministic uniform [-1, 1) generator (mulberry32). */
function rng(seed: number): () => number {
  const next = mulberry32(seed);
  return () => next() * 2 - 1;
}

const bytesOf = (a: Float32Array): Uint8Array =>
  new Uint8Array(a.buffer.slice(a.byteOffset, a.byteOffset + a.byteLength));
const randomF32 = (n: number, rand: () => number, scale = 1): Float32Array =>
  Float32Array.from({ length: n }, () => rand() * scale);

function expectClose(got: Float32Array, want: Float32Array, what: string, rel = 1e-5): void {
  expect(got.length, what).toBe(want.length);
  for (let i = 0; i < want.length; i++) {
    const tol = rel * Math.max(1, Math.abs(want[i]));
    if (!(Math.abs(got[i] - want[i]) <= tol)) expect.fail(`${what}[${i}]: ${got[i]} vs reference ${want[i]}`);
  }
}

/** Runs `body` on the WASM and reference backends with the same inputs and returns both results. */
async function both<T>(wasm: Ops, body: (ops: Ops) => Promise<T>): Promise<[T, T]> {
  return [await body(wasm), await body(createCpuOps())];
}

/** Uploads `rows` × `cols` f32 values and embeds them into a new activation (how tests set activations). */
async function setActivation(
  ops: Ops,
  label: string,
  values: Float32Array,
  rows: number,
  cols: number,
): Promise<Activation> {
  const table = await ops.uploadWeight(
    { name: `${label}-values`, type: GgmlType.F32, shape: [cols, rows] },
    bytesOf(values),
  );
  const a = ops.createActivation(label, rows, cols);
  ops.beginStep({ tokens: Int32Array.from({ length: rows }, (_, i) => i), startPos: 0, slot: 0 });
  ops.embed(a, table, rows);
  ops.endStep();
  return a;
}

const features = detectWasmFeatures();
const CONFIGS: { variant: WasmVariant; threads: number }[] = [
  { variant: 'scalar', threads: 1 },
  { variant: 'simd128', threads: 1 },
  { variant: features.relaxedSimd ? 'relaxed-simd' : 'simd128', threads: 2 },
];

for (const config of CONFIGS) {
  describe(`wasm ops vs reference (${config.variant} ×${config.threads})`, () => {
    let wasm: Ops;
    it('creates the backend', async () => {
      wasm = await createWasmOps(config);
      expect(wasm.name).toBe('wasm');
    });

    it('embed: f32, Q8_0 and Q4_K tables, rows picked by the step tokens', async () => {
      const rand = rng(1);
      for (const type of [GgmlType.F32, GgmlType.Q8_0, GgmlType.Q4_K]) {
        const cols = 256;
        const vocab = 11;
        const qt = getQuantType(type);
        const values = randomF32(cols * vocab, rand);
        const bytes = new Uint8Array((cols * vocab * qt.blockBytes) / qt.blockElements);
        qt.quantizeRow!(values, bytes);
        const [got, want] = await both(wasm, async (ops) => {
          const t = await ops.uploadWeight({ name: 'tok', type, shape: [cols, vocab] }, bytes);
          const out = ops.createActivation('e', 4, cols);
          ops.beginStep({ tokens: Int32Array.of(3, 0, 10, 3), startPos: 0, slot: 0 });
          ops.embed(out, t, 4);
          ops.endStep();
          return ops.read(out, 4);
        });
        expectClose(got, want, `embed ${qt.name}`, 0);
      }
    });

    it('rmsNorm: whole rows and per-head groups, with and without weight', async () => {
      const rand = rng(2);
      const x = randomF32(3 * 96, rand, 3);
      const w = randomF32(96, rand);
      const wHead = randomF32(32, rand);
      const [got, want] = await both(wasm, async (ops) => {
        const a = await setActivation(ops, 'x', x, 3, 96);
        const o = ops.createActivation('o', 3, 96);
        const wt = await ops.uploadWeight({ name: 'w', type: GgmlType.F32, shape: [96] }, bytesOf(w));
        const wh = await ops.uploadWeight({ name: 'wh', type: GgmlType.F32, shape: [32] }, bytesOf(wHead));
        ops.beginStep({ tokens: Int32Array.of(0, 0, 0), startPos: 0, slot: 0 });
        ops.rmsNorm(o, a, wt, 1e-5, 3);
        const r1 = await ops.read(o, 3);
        ops.rmsNorm(o, a, null, 1e-6, 3);
        const r2 = await ops.read(o, 3);
        ops.rmsNorm(a, a, wh, 1e-5, 2, 32); // in place, per head
        const r3 = await ops.read(a, 3);
        ops.endStep();
        return [r1, r2, r3];
      });
      for (let i = 0; i < 3; i++) expectClose(got[i], want[i], `rmsNorm case ${i}`);
    });

    it('rope: norm, neox, partial rotary, frequency factors and YaRN at an offset position', async () => {
      const rand = rng(3);
      const headDim = 16;
      const cases: RopeParams[] = [
        { kind: 'norm', headDim, nRot: 16, theta: 10000, freqScale: 1 },
        { kind: 'neox', headDim, nRot: 16, theta: 1e6, freqScale: 0.5 },
        { kind: 'neox', headDim, nRot: 8, theta: 10000, freqScale: 1 },
        {
          kind: 'norm',
          headDim,
          nRot: 16,
          theta: 500000,
          freqScale: 1,
          freqFactors: Float32Array.from({ length: 8 }, (_, i) => 1 + i),
        },
        {
          kind: 'neox',
          headDim,
          nRot: 16,
          theta: 10000,
          freqScale: 0.25,
          yarn: { extFactor: 1, attnFactor: 1, betaFast: 32, betaSlow: 1, nCtxOrig: 64 },
        },
      ];
      for (const params of cases) {
        const x = randomF32(3 * 3 * headDim, rand);
        const [got, want] = await both(wasm, async (ops) => {
          const a = await setActivation(ops, 'q', x, 3, 3 * headDim);
          ops.beginStep({ tokens: Int32Array.of(0, 0, 0), startPos: 17, slot: 0 });
          ops.rope(a, 3, params);
          ops.endStep();
          return ops.read(a, 3);
        });
        expectClose(got, want, `rope ${params.kind} nRot ${params.nRot}`);
      }
    });

    it('storeKv + attention: GQA, sliding window, soft-capping, prompt then decode steps, two slots', async () => {
      const rand = rng(4);
      const nHeads = 4;
      const nKvHeads = 2;
      const headDim = 8;
      const steps = [
        { startPos: 0, n: 5 },
        { startPos: 5, n: 1 },
        { startPos: 6, n: 2 },
      ];
      const inputs = steps.map((s) => ({
        q: randomF32(s.n * nHeads * headDim, rand),
        k: randomF32(s.n * nKvHeads * headDim, rand),
        v: randomF32(s.n * nKvHeads * headDim, rand),
      }));
      for (const [slidingWindow, softcap] of [
        [0, 0],
        [3, 0],
        [0, 2.5],
      ]) {
        const params = { nHeads, nKvHeads, headDim, scale: 1 / Math.sqrt(headDim), slidingWindow, softcap };
        const [got, want] = await both(wasm, async (ops) => {
          ops.createKvCache({ nSlots: 2, contextLength: 16, layers: uniformKvLayers(2, nKvHeads, headDim) });
          const results: Float32Array[] = [];
          for (let s = 0; s < steps.length; s++) {
            const { startPos, n } = steps[s];
            const q = await setActivation(ops, 'q', inputs[s].q, n, nHeads * headDim);
            const k = await setActivation(ops, 'k', inputs[s].k, n, nKvHeads * headDim);
            const v = await setActivation(ops, 'v', inputs[s].v, n, nKvHeads * headDim);
            const o = ops.createActivation('o', n, nHeads * headDim);
            ops.beginStep({ tokens: new Int32Array(n), startPos, slot: 1 });
            ops.storeKv(1, k, v, n);
            ops.attention(o, q, 1, n, params);
            ops.endStep();
            results.push(await ops.read(o, n));
          }
          // copyKv: slot 1 → slot 0, then attend from slot 0 at the last step's positions.
          ops.copyKv(1, 0, 8);
          const last = steps[2];
          const q = await setActivation(ops, 'q', inputs[2].q, last.n, nHeads * headDim);
          const o = ops.createActivation('o', last.n, nHeads * headDim);
          ops.beginStep({ tokens: new Int32Array(last.n), startPos: last.startPos, slot: 0 });
          ops.attention(o, q, 1, last.n, params);
          ops.endStep();
          results.push(await ops.read(o, last.n));
          return results;
        });
        for (let i = 0; i < got.length; i++)
          expectClose(got[i], want[i], `attention window ${slidingWindow} cap ${softcap} step ${i}`);
        expectClose(got[3], got[2], 'attention from the copied slot');
      }
    });

    it.each([
      [8, 2, 64, 150],
      [6, 3, 80, 37], // head width not a multiple of 32: 32-column passes, then 4-column ones
      [4, 4, 6, 23], // not a multiple of 4: the scalar dot and V-sum paths
      [14, 2, 64, 600], // Qwen2.5-0.5B's 7-head groups over five 128-position blocks (the last one partial)
      [4, 2, 6, 301], // three blocks, the last a tail of 45 rows, scalar paths
    ])(
      'attention over a long context: %i heads, %i KV heads × %i, %i positions (split across threads by head)',
      async (nHeads, nKvHeads, headDim, prompt) => {
        const rand = rng(6);
        const qp = randomF32(prompt * nHeads * headDim, rand);
        const kp = randomF32(prompt * nKvHeads * headDim, rand);
        const vp = randomF32(prompt * nKvHeads * headDim, rand);
        const params = { nHeads, nKvHeads, headDim, scale: 1 / Math.sqrt(headDim), slidingWindow: 0, softcap: 0 };
        const [got, want] = await both(wasm, async (ops) => {
          ops.createKvCache({ nSlots: 1, contextLength: prompt + 1, layers: uniformKvLayers(1, nKvHeads, headDim) });
          const q = await setActivation(ops, 'q', qp, prompt, nHeads * headDim);
          const k = await setActivation(ops, 'k', kp, prompt, nKvHeads * headDim);
          const v = await setActivation(ops, 'v', vp, prompt, nKvHeads * headDim);
          const o = ops.createActivation('o', prompt, nHeads * headDim);
          ops.beginStep({ tokens: new Int32Array(prompt), startPos: 0, slot: 0 });
          ops.storeKv(0, k, v, prompt);
          ops.attention(o, q, 0, prompt, params);
          ops.endStep();
          return ops.read(o, prompt);
        });
        expectClose(got, want, 'long-context attention', 1e-4);
      },
    );

    it('glu (silu, gelu), add, scale, softcap, copyRows, argmax and topK', async () => {
      const rand = rng(5);
      const g = randomF32(3 * 40, rand, 4);
      const u = randomF32(3 * 40, rand, 2);
      const [got, want] = await both(wasm, async (ops) => {
        const ga = await setActivation(ops, 'g', g, 3, 40);
        const ua = await setActivation(ops, 'u', u, 3, 40);
        const o = ops.createActivation('o', 3, 40);
        const last = ops.createActivation('last', 1, 40);
        ops.beginStep({ tokens: Int32Array.of(0, 0, 0), startPos: 0, slot: 0 });
        const r: Float32Array[] = [];
        ops.glu(o, ga, ua, 3, 'silu');
        r.push(await ops.read(o, 3));
        ops.glu(o, ga, ua, 3, 'gelu');
        r.push(await ops.read(o, 3));
        ops.add(o, o, ua, 3);
        r.push(await ops.read(o, 3));
        ops.scale(o, 0.75, 3);
        r.push(await ops.read(o, 3));
        ops.softcap(o, 1.5, 3);
        r.push(await ops.read(o, 3));
        ops.copyRows(last, o, 2, 1);
        r.push(await ops.read(last, 1));
        ops.copyRows(o, last, 0, 1, 1); // into row 1
        ops.copyRows(o, o, 0, 1, 2); // within one buffer
        r.push(await ops.read(o, 3));
        r.push(Float32Array.of(await ops.argmax(o, 1)));
        const top = await ops.topK(ga, 2, 5);
        r.push(Float32Array.from(top.ids), top.logits);
        ops.endStep();
        return r;
      });
      for (let i = 0; i < want.length; i++) expectClose(got[i], want[i], `elementwise op ${i}`);
    });

    it('reports bad input as LlmError: unknown type, short data, token outside vocabulary, context overflow', async () => {
      await expect(
        wasm.uploadWeight({ name: 'bad', type: 99 as GgmlType, shape: [32, 1] }, new Uint8Array(64)),
      ).rejects.toSatisfy((e) => isLlmError(e, 'unsupported-type'));
      await expect(
        wasm.uploadWeight({ name: 'short', type: GgmlType.Q4_0, shape: [64, 2] }, new Uint8Array(10)),
      ).rejects.toSatisfy((e) => isLlmError(e, 'gguf-invalid'));
      const t: Weight = await wasm.uploadWeight({ name: 't', type: GgmlType.F32, shape: [4, 2] }, new Uint8Array(32));
      const a = wasm.createActivation('a', 2, 4);
      wasm.beginStep({ tokens: Int32Array.of(2), startPos: 0, slot: 0 });
      expect(() => wasm.embed(a, t, 1)).toThrow(/outside the vocabulary/);
      wasm.createKvCache({ nSlots: 1, contextLength: 2, layers: uniformKvLayers(1, 1, 4) });
      wasm.beginStep({ tokens: Int32Array.of(0), startPos: 2, slot: 0 });
      expect(() => wasm.storeKv(0, a, a, 1)).toThrow(expect.objectContaining({ code: 'context-overflow' }));
      wasm.endStep();
    });

    it('destroys cleanly: the KV cache is released, ops then fail with LlmError, a second destroy is harmless', () => {
      const a = wasm.createActivation('after-destroy', 1, 4);
      expect(() => wasm.destroy()).not.toThrow();
      wasm.beginStep({ tokens: Int32Array.of(0), startPos: 0, slot: 0 });
      expect(() => wasm.storeKv(0, a, a, 1)).toThrow(
        expect.objectContaining({ code: 'invalid-request', message: expect.stringMatching(/before createKvCache/) }),
      );
      wasm.endStep();
      expect(() => wasm.destroy()).not.toThrow();
    });
  });
}

describe('wasm memory', () => {
  it('reserve grows once: the allocations it made room for move nothing, a reserve past 4 GiB is ignored', () => {
    const heap = new WasmHeap(false);
    heap.alloc(1000, 'small');
    heap.reserve(200 << 20);
    const buffer = heap.memory.buffer;
    const reserved = buffer.byteLength;
    for (let i = 0; i < 48; i++) heap.alloc(4 << 20, `weight ${i}`);
    expect(heap.memory.buffer).toBe(buffer); // a grow would have detached it
    expect(() => heap.reserve(5 * 2 ** 30)).not.toThrow();
    expect(heap.memory.buffer.byteLength).toBe(reserved);
  });

  it('fails with out-of-memory, naming the sizes, past the 4 GiB wasm32 limit', () => {
    const heap = new WasmHeap(false);
    heap.alloc(1000, 'small');
    let err: unknown;
    try {
      heap.alloc(5 * 2 ** 30, 'a 5 GiB weight');
    } catch (e) {
      err = e;
    }
    expect(isLlmError(err, 'out-of-memory')).toBe(true);
    expect(String((err as Error).message)).toMatch(/a 5 GiB weight \(5120\.0 MiB\).*at most 4096\.0 MiB/);
  });
});

describe('wasm backend options', () => {
  it('rejects a variant this engine cannot run and a bad thread count', async () => {
    await expect(createWasmOps({ threads: 0 })).rejects.toSatisfy((e) => isLlmError(e, 'invalid-request'));
    // Node 20 without --experimental-wasm-relaxed-simd (this file does not set it) cannot run relaxed SIMD.
    if (!features.relaxedSimd) {
      await expect(createWasmOps({ variant: 'relaxed-simd' })).rejects.toSatisfy((e) =>
        isLlmError(e, 'feature-missing'),
      );
    }
  });
});
