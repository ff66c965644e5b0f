/**
 * Streamed weight loading (`Ops.beginWeight`, model/weight-loader.ts) on the WASM backend: reading each tensor in
 * small pieces straight into WASM memory (row pairs rearranged piece by piece, fused QKV/gate-up split on the way)
 * gives bit-identical logits to reading each tensor whole and calling `uploadWeight`; progress fires once per tensor;
 * an abort mid-load rejects with 'aborted', leaves no read in flight and cancels every unfinished stream; a NaN in a
 * later piece is reported at its element.
 */

import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
import { describe, expect, it, vi } from 'vitest';
import { createEngine } from '../../src/api/create-engine.js';
import type { Ops, WeightInfo, WeightStream } from '../../src/backend/ops.js';
import { createWasmOps } from '../../src/backend/wasm/index.js';
import { WasmOps } from '../../src/backend/wasm/wasm-ops.js';
import { isLlmError } from '../../src/errors.js';
import { parseGguf } from '../../src/gguf/parse.js';
import { GgmlType } from '../../src/gguf/types.js';
import { type ByteSource, MemoryByteSource } from '../../src/io/byte-source.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadTransformer } from '../../src/model/load.js';
import { sharedPath } from '../helpers/shared-path.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

const TOKENS = Int32Array.of(1, 82, 113, 346, 701, 265, 263, 931);

/** `ops` without `beginWeight`: the loader reads each tensor whole and calls `uploadWeight`. */
function wholeTensorOps(ops: Ops): Ops {
  return new Proxy(ops, {
    get(target, key) {
      if (key === 'beginWeight') return undefined;
      const v = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** Counts streams begun, finished and cancelled. */
function countingOps(ops: Ops, counts: { begun: number; finished: number; cancelled: number }): Ops {
  return new Proxy(ops, {
    get(target, key) {
      if (key === 'beginWeight') {
        return (info: WeightInfo): WeightStream => {
          const s = target.beginWeight!(info);
          counts.begun++;
          return {
            target: (o, l) => s.target(o, l),
            commit: (o, l) => s.commit(o, l),
            finish: async () => {
              counts.finished++;
              return s.finish();
            },
            cancel: () => {
              counts.cancelled++;
              s.cancel();
            },
          };
        };
      }
      const v = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** A source that counts reads still in flight (its `readInto`). */
function trackedSource(inner: ByteSource): ByteSource & { inFlight: number } {
  const s = {
    size: inner.size,
    name: inner.name,
    inFlight: 0,
    read: (o: number, l: number, sig?: AbortSignal) => inner.read(o, l, sig),
    async readInto(o: number, dst: Uint8Array, sig?: AbortSignal) {
      s.inFlight++;
      try {
        await new Promise((r) => setTimeout(r, 1));
        dst.set(await inner.read(o, dst.byteLength, sig));
      } finally {
        s.inFlight--;
      }
    },
  };
  return s;
}

async function logitsOf(rel: string, streamed: boolean): Promise<Float32Array> {
  const path = sharedPath('models', rel);
  const source = await NodeFileSource.open(path);
  try {
    const gguf = await parseGguf(source);
    const ops = await createWasmOps({ threads: 1 });
    const model = await loadTransformer(gguf, source, streamed ? ops : wholeTensorOps(ops), {
      contextLength: 32,
      pieceBytes: 1000, // ≥ 4 rows: many pieces per matrix, odd row counts end a piece
    });
    const logits = (await model.eval(
      TOKENS.map((t) => t % model.config.vocabSize),
      0,
      0,
      { logits: 'all' },
    ))!;
    model.destroy();
    return logits;
  } finally {
    await source.close();
  }
}

describe('streamed weight load (WASM)', () => {
  for (const rel of ['stories260K.gguf', 'arch/phi3-q8_0.gguf', 'arch/qwen2-q8_0.gguf', 'arch/llama3-q4_k_m.gguf']) {
    it(`${rel}: pieces read into WASM memory give the same logits as whole tensors`, async () => {
      const streamed = await logitsOf(rel, true);
      const whole = await logitsOf(rel, false);
      expect(streamed.length).toBe(whole.length);
      expect(Buffer.from(streamed.buffer).equals(Buffer.from(whole.buffer))).toBe(true);
    });
  }

  it('makes room for all the weights before the first one is begun (one memory grow, not one per step)', async () => {
    const bytes = readFileSync(sharedPath('models', 'arch/qwen2-q8_0.gguf'));
    const gguf = await parseGguf(new MemoryByteSource(bytes));
    const ops = (await createWasmOps({ threads: 1 })) as WasmOps;
    const calls: string[] = [];
    const reserve = vi.spyOn(ops, 'reserveWeights').mockImplementation((n: number) => {
      calls.push(`reserve ${n}`);
    });
    const begin = ops.beginWeight.bind(ops);
    ops.beginWeight = (info) => {
      calls.push('begin');
      return begin(info);
    };
    const model = await loadTransformer(gguf, new MemoryByteSource(bytes), ops, {});
    expect(reserve).toHaveBeenCalledTimes(1);
    expect(calls[0]).toBe(`reserve ${gguf.tensors.reduce((n, t) => n + t.byteLength, 0)}`);
    expect(calls.slice(1).every((c) => c === 'begin')).toBe(true);
    model.destroy();
  });

  it('reports progress per tensor; an abort mid-load leaves no read in flight and cancels open streams', async () => {
    const bytes = readFileSync(sharedPath('models', 'arch/qwen2-q8_0.gguf'));
    const gguf = await parseGguf(new MemoryByteSource(bytes));
    const seen: string[] = [];
    const ops = await createWasmOps({ threads: 1 });
    const model = await loadTransformer(gguf, new MemoryByteSource(bytes), ops, {
      pieceBytes: 1000,
      onProgress: (p) => seen.push(p.tensor),
    });
    expect(seen.length).toBe(gguf.tensors.length);
    expect(new Set(seen).size).toBe(gguf.tensors.length);
    model.destroy();

    const controller = new AbortController();
    const counts = { begun: 0, finished: 0, cancelled: 0 };
    const source = trackedSource(new MemoryByteSource(bytes));
    let events = 0;
    const err = await loadTransformer(gguf, source, countingOps(await createWasmOps({ threads: 1 }), counts), {
      signal: controller.signal,
      pieceBytes: 1000,
      onProgress: () => {
        if (++events === 5) controller.abort();
      },
    }).catch((e: unknown) => e);
    expect(isLlmError(err, 'aborted')).toBe(true);
    expect(source.inFlight).toBe(0);
    expect(counts.begun).toBeGreaterThan(5);
    expect(counts.begun).toBeLessThan(gguf.tensors.length);
    expect(counts.finished + counts.cancelled).toBe(counts.begun);

    // A failure while the next piece is being read (here: the progress callback throws) waits for that read too.
    const source2 = trackedSource(new MemoryByteSource(bytes));
    const counts2 = { begun: 0, finished: 0, cancelled: 0 };
    const failed = await loadTransformer(gguf, source2, countingOps(await createWasmOps({ threads: 1 }), counts2), {
      pieceBytes: 1000,
      onProgress: (p) => {
        if (p.tensor === gguf.tensors[3].name) throw new Error('progress sink broke');
      },
    }).catch((e: unknown) => e);
    expect((failed as Error).message).toBe('progress sink broke');
    expect(source2.inFlight).toBe(0);
    expect(counts2.cancelled).toBeGreaterThan(0);
    expect(counts2.finished + counts2.cancelled).toBe(counts2.begun);
  });

  it('names the element of a NaN met in a later piece', async () => {
    const bytes = new Uint8Array(readFileSync(sharedPath('models', 'stories260K.gguf')));
    const gguf = await parseGguf(new MemoryByteSource(bytes));
    const t = gguf.tensors.find((x) => x.type === GgmlType.F32 && x.shape.length === 2 && x.shape[1] >= 16)!;
    const element = 9 * t.shape[0] + 3; // row 9: the third piece of 4 rows
    new DataView(bytes.buffer).setFloat32(gguf.tensorDataOffset + t.offset + element * 4, Number.NaN, true);
    const err = await loadTransformer(gguf, new MemoryByteSource(bytes), await createWasmOps({ threads: 1 }), {
      pieceBytes: 1,
    }).catch((e: unknown) => e);
    expect(isLlmError(err, 'gguf-invalid')).toBe(true);
    expect((err as { details: Record<string, unknown> }).details).toMatchObject({ tensor: t.name, element });
  });

  it('createEngine aborted mid-upload rejects with aborted, destroys the backend and closes the file', async () => {
    const destroy = vi.spyOn(WasmOps.prototype, 'destroy');
    const close = vi.spyOn(NodeFileSource.prototype, 'close');
    try {
      const controller = new AbortController();
      let uploads = 0;
      const err = await createEngine({
        model: sharedPath('models', 'arch/qwen2-q8_0.gguf'),
        backend: 'wasm',
        threads: 1,
        contextLength: 32,
        signal: controller.signal,
        onProgress: (p) => {
          if (p.phase === 'upload' && ++uploads === 3) controller.abort();
        },
      }).catch((e: unknown) => e);
      expect(isLlmError(err, 'aborted')).toBe(true);
      expect(uploads).toBe(3);
      expect(destroy).toHaveBeenCalledTimes(1);
      expect(close).toHaveBeenCalledTimes(1);
    } finally {
      destroy.mockRestore();
      close.mockRestore();
    }
  });
});
