/**
 * Sampler: llama.cpp's chain order and semantics, seeded determinism, and that the backend top-k and argmax
 * routes pick exactly what the full-logit route picks.
 */
import { describe, expect, it } from 'vitest';
import { createRng } from '../../../src/engine/rng.js';
import {
  applyPenalties,
  DEFAULT_SAMPLING,
  Sampler,
  sampleCandidates,
  sampleLogits,
  selectTopK,
  type LogitSource,
  type SamplingParams,
} from '../../../src/engine/sampler.js';

const params = (p: Partial<SamplingParams>): SamplingParams => ({ ...DEFAULT_SAMPLING, seed: 42, ...p });

function randomRow(n: number, seed: number): Float32Array {
  const rng = createRng(seed);
  return Float32Array.from({ length: n }, () => (rng.nextDouble() - 0.5) * 8);
}

/** A logit source over a fixed row that counts bytes read back. */
function source(row: Float32Array): LogitSource & { bytes: number } {
  const s = {
    bytes: 0,
    async readLogits() {
      s.bytes += row.byteLength;
      return row.slice();
    },
    async argmax() {
      s.bytes += 4;
      let b = 0;
      for (let i = 1; i < row.length; i++) if (row[i] > row[b]) b = i;
      return b;
    },
    async topK(k: number) {
      s.bytes += 8 * k;
      const c = selectTopK(Float64Array.from(row), k);
      return { ids: c.ids, logits: Float32Array.from(c.logits) };
    },
  };
  return s;
}

describe('rng', () => {
  it('is deterministic per seed and differs across seeds', () => {
    const a = createRng(7);
    const b = createRng(7);
    const c = createRng(8);
    const xs = Array.from({ length: 5 }, () => a.nextDouble());
    expect(Array.from({ length: 5 }, () => b.nextDouble())).toEqual(xs);
    expect(Array.from({ length: 5 }, () => c.nextDouble())).not.toEqual(xs);
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
    expect(createRng(2 ** 40).nextUint32()).not.toBe(createRng(0).nextUint32());
  });
});

describe('selectTopK', () => {
  it('sorts descending and breaks ties by lower id', () => {
    const c = selectTopK(Float64Array.from([1, 5, 5, 3, 5, -1]), 4);
    expect(Array.from(c.ids)).toEqual([1, 2, 4, 3]);
    expect(Array.from(c.logits)).toEqual([5, 5, 5, 3]);
  });
  it('k ≥ n returns every entry', () => {
    expect(selectTopK(Float64Array.from([0, 2, 1]), 10).n).toBe(3);
  });
});

describe('penalties (llama.cpp formula)', () => {
  it('divides positive, multiplies negative, subtracts frequency and presence', () => {
    const logits = Float64Array.from([2, -2, 1, 4]);
    applyPenalties(
      logits,
      params({ repetitionPenalty: 2, frequencyPenalty: 0.5, presencePenalty: 0.25, penaltyLastN: 3 }),
      [3, 0, 1, 1],
    );
    // last 3 tokens: 0 ×1, 1 ×2 (token 3 is outside the window)
    expect(Array.from(logits)).toEqual([2 / 2 - 0.5 - 0.25, -2 * 2 - 1 - 0.25, 1, 4]);
  });
  it('penaltyLastN 0 disables them', () => {
    const logits = Float64Array.from([2, 2]);
    applyPenalties(logits, params({ repetitionPenalty: 2, penaltyLastN: 0 }), [0]);
    expect(Array.from(logits)).toEqual([2, 2]);
  });
});

describe('top-p, min-p, temperature', () => {
  const c = () => ({
    ids: Int32Array.from([0, 1, 2, 3]),
    logits: Float64Array.from([Math.log(0.5), Math.log(0.3), Math.log(0.15), Math.log(0.05)]),
    n: 4,
  });
  it('top-p keeps the smallest prefix reaching p', () => {
    const seen = new Set<number>();
    const rng = createRng(1);
    for (let i = 0; i < 300; i++) seen.add(sampleCandidates(c(), params({ topP: 0.75, minP: 0, temperature: 1 }), rng));
    expect([...seen].sort()).toEqual([0, 1]);
  });
  it('min-p drops tokens below p·p_max', () => {
    const seen = new Set<number>();
    const rng = createRng(2);
    for (let i = 0; i < 300; i++) seen.add(sampleCandidates(c(), params({ topP: 1, minP: 0.31, temperature: 1 }), rng));
    expect([...seen].sort()).toEqual([0, 1]);
  });
  it('draws follow the softmax at temperature 1', () => {
    const rng = createRng(3);
    const counts = [0, 0, 0, 0];
    const N = 4000;
    for (let i = 0; i < N; i++) counts[sampleCandidates(c(), params({ topP: 1, minP: 0, temperature: 1 }), rng)]++;
    [0.5, 0.3, 0.15, 0.05].forEach((p, i) => expect(Math.abs(counts[i] / N - p)).toBeLessThan(0.03));
  });
  it('a tiny temperature concentrates on the top token', () => {
    const rng = createRng(4);
    for (let i = 0; i < 50; i++)
      expect(sampleCandidates(c(), params({ topP: 1, minP: 0, temperature: 0.01 }), rng)).toBe(0);
  });
});

describe('Sampler routes', () => {
  it('greedy reads 4 bytes per token', async () => {
    const row = randomRow(1000, 5);
    const src = source(row);
    const s = new Sampler(params({ temperature: 0 }));
    expect(s.route).toBe('argmax');
    const t = await s.sample(src, []);
    expect(t).toBe(sampleLogits(row, params({ temperature: 0 }), [], createRng(0)));
    expect(src.bytes).toBe(4);
  });

  it('backend top-k gives exactly the tokens of the full-logit route, for every seed', async () => {
    for (let seed = 0; seed < 40; seed++) {
      const row = randomRow(500, 100 + seed);
      const p = params({ seed, temperature: 0.9, topK: 40, topP: 0.9, minP: 0.02 });
      const s = new Sampler(p);
      expect(s.route).toBe('top-k');
      const src = source(row);
      const viaTopK = await s.sample(src, []);
      expect(src.bytes).toBe(8 * 40);
      expect(viaTopK).toBe(sampleLogits(row, p, [], createRng(seed)));
    }
  });

  it('a top-k of the whole vocabulary reads the full row (no backend top-k beyond the vocabulary)', () => {
    expect(new Sampler(params({ topK: 40 }), 32).route).toBe('full');
    expect(new Sampler(params({ topK: 40 }), 512).route).toBe('top-k');
  });

  it('bias or penalties read the full row; bias −100 bans a token', async () => {
    const row = randomRow(100, 9);
    let best = 0;
    for (let i = 1; i < row.length; i++) if (row[i] > row[best]) best = i;
    const p = params({ temperature: 0, logitBias: new Map([[best, -100]]) });
    const s = new Sampler(p);
    expect(s.route).toBe('full');
    const src = source(row);
    const t = await s.sample(src, []);
    expect(t).not.toBe(best);
    expect(src.bytes).toBe(400);
  });

  it('the same seed gives the same sequence, another seed another', async () => {
    const run = async (seed: number) => {
      const s = new Sampler(params({ seed, temperature: 1.5, topK: 0, topP: 1, minP: 0 }));
      const out: number[] = [];
      for (let i = 0; i < 30; i++) out.push(await s.sample(source(randomRow(64, i)), out));
      return out;
    };
    expect(await run(11)).toEqual(await run(11));
    expect(await run(11)).not.toEqual(await run(12));
  });
});
