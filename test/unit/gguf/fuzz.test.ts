/**
 * Fuzz: mutates and truncates the real fixtures (byte flips, random spans, inflated length/count fields, truncation)
 * and asserts every outcome is a parsed file that respects the file bounds, or an `LlmError('gguf-invalid'|'aborted')`
 * — never another exception, never a hang. Seeded and deterministic; WEBGGUF_FUZZ_CASES / WEBGGUF_FUZZ_SEED override.
 */

import { describe, expect, it } from 'vitest';
import { LlmError } from '../../../src/errors.js';
import { type GgufFile, parseGguf } from '../../../src/gguf/index.js';
import type { ByteSource } from '../../../src/io/byte-source.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { mulberry32 } from '../../helpers/mulberry32.js';
import { listGgufFiles } from '../../helpers/shared-path.js';
import { fixtureBytes } from './gguf-test-kit.js';
import { type LengthField, locateFields } from './gguf-field-locator.js';

const CASES = Number(process.env.WEBGGUF_FUZZ_CASES ?? 10_000);
const SEED = Number(process.env.WEBGGUF_FUZZ_SEED ?? 0x5eed);
/** A case taking longer than this is a hang. */
const CASE_TIMEOUT_MS = 5_000;

const prng = mulberry32;

/** A fixture prepared once: its bytes, header end and the positions of its count/length/type fields. */
interface Prepared {
  name: string;
  bytes: Uint8Array;
  headerEnd: number;
  fields: LengthField[];
}

/** Serves a mutated copy of the first `patched.length` bytes and the original bytes after them, cut at `size`. */
class PatchedSource implements ByteSource {
  readonly name = 'fuzz';
  constructor(
    private readonly patched: Uint8Array,
    private readonly original: Uint8Array,
    readonly size: number,
    private readonly onRead: () => void,
  ) {}
  async read(offset: number, length: number, signal?: AbortSignal): Promise<Uint8Array> {
    this.onRead();
    if (signal?.aborted) throw new LlmError('aborted', 'fuzz read aborted');
    const mem = new MemoryByteSource(this.original.subarray(0, this.size));
    const out = new Uint8Array(await mem.read(offset, length));
    if (offset < this.patched.length) {
      const end = Math.min(this.patched.length, offset + length, this.size);
      out.set(this.patched.subarray(offset, end), 0);
    }
    return out;
  }
}

const INFLATED_U64 = [2n ** 64n - 1n, 2n ** 63n, 2n ** 53n, 2n ** 32n, 2n ** 31n, 0n, 1n];

function mutate(p: Prepared, rnd: () => number): { patched: Uint8Array; size: number; kind: string } {
  const region = Math.min(p.bytes.length, p.headerEnd + 64);
  const patched = p.bytes.slice(0, region);
  const view = new DataView(patched.buffer);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  let size = p.bytes.length;
  const r = rnd();
  let kind: string;
  if (r < 0.25) {
    kind = 'flip';
    const n = 1 + Math.floor(rnd() * 4);
    for (let i = 0; i < n; i++) patched[Math.floor(rnd() * region)] ^= 1 << Math.floor(rnd() * 8);
  } else if (r < 0.4) {
    kind = 'span';
    const at = Math.floor(rnd() * region);
    const n = 1 + Math.floor(rnd() * 16);
    for (let i = at; i < Math.min(region, at + n); i++) patched[i] = Math.floor(rnd() * 256);
  } else if (r < 0.75) {
    kind = 'inflate';
    const f = pick(p.fields);
    if (f.width === 8) {
      const current = view.getBigUint64(f.offset, true);
      const choices = [
        ...INFLATED_U64,
        current + 1n,
        current * 2n + 1n,
        BigInt(p.bytes.length),
        BigInt(p.bytes.length - f.offset),
      ];
      view.setBigUint64(f.offset, BigInt.asUintN(64, pick(choices)), true);
    } else {
      const choices = [0xffffffff, 0, 5, 13, 40, 1 << 31, view.getUint32(f.offset, true) + 1, Math.floor(rnd() * 64)];
      view.setUint32(f.offset, pick(choices) >>> 0, true);
    }
  } else if (r < 0.93) {
    kind = 'truncate';
    size = rnd() < 0.8 ? Math.floor(rnd() * (p.headerEnd + 1)) : Math.floor(rnd() * p.bytes.length);
  } else {
    kind = 'inflate+truncate';
    const f = pick(p.fields);
    if (f.width === 8) view.setBigUint64(f.offset, BigInt(Math.floor(rnd() * 2 ** 20)), true);
    else view.setUint32(f.offset, Math.floor(rnd() * 16), true);
    size = Math.floor(rnd() * p.bytes.length);
  }
  return { patched, size, kind };
}

/** Checks a successful parse respects the file: every tensor aligned and inside it. */
function checkParsed(f: GgufFile, size: number): void {
  for (const t of f.tensors) {
    if (t.offset % f.alignment !== 0 || f.tensorDataOffset + t.offset + t.byteLength > size) {
      throw new Error(`parsed file has tensor ${t.name} outside the file or misaligned`);
    }
  }
}

async function runCase(p: Prepared, rnd: () => number): Promise<string> {
  const { patched, size, kind } = mutate(p, rnd);
  const ac = new AbortController();
  const abortAfter = rnd() < 0.03 ? 1 + Math.floor(rnd() * 3) : Infinity;
  let reads = 0;
  const src = new PatchedSource(patched, p.bytes, size, () => {
    if (++reads >= abortAfter) ac.abort();
  });
  // Small first chunks exercise the grow-and-resume path; they cost more restarts, so they get a smaller share.
  const initialChunkBytes = [256, 4096, 4096, 65536, 65536, 1 << 20, 1 << 20][Math.floor(rnd() * 7)];
  let timer: ReturnType<typeof setTimeout> | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`case hung for ${CASE_TIMEOUT_MS} ms`)), CASE_TIMEOUT_MS);
  });
  try {
    const f = await Promise.race([parseGguf(src, { signal: ac.signal, limits: { initialChunkBytes } }), hang]);
    checkParsed(f, size);
    return 'parsed';
  } catch (e) {
    if (e instanceof LlmError && (e.code === 'gguf-invalid' || e.code === 'aborted')) {
      if (typeof e.message !== 'string' || e.message.length === 0) throw new Error('empty LlmError message');
      return e.code;
    }
    throw new Error(`fuzz case (${p.name}, ${kind}, size ${size}) threw a non-LlmError: ${String(e)}`, { cause: e });
  } finally {
    clearTimeout(timer);
  }
}

describe('GGUF parser fuzz', () => {
  it(`survives ${CASES} mutated and truncated fixtures (seed ${SEED})`, async () => {
    const all = listGgufFiles();
    // Model fixtures carry small headers (fast cases); the large tokenizer-vector headers get every 200th case.
    const models = all.filter((f) => f.includes('/models/'));
    const vocabs = all.filter((f) => f.includes('/tokenizer-vectors/'));
    const prepare = async (path: string): Promise<Prepared> => {
      const bytes = fixtureBytes(path);
      const parsed = await parseGguf(new MemoryByteSource(bytes));
      const { fields, headerEnd } = locateFields(bytes);
      expect(headerEnd).toBeLessThanOrEqual(parsed.tensorDataOffset);
      return { name: path.slice(path.indexOf('/shared/') + 8), bytes, headerEnd, fields };
    };
    // arch/ headers (2k-token vocabularies, chat templates) cost ~4× the stories/synthetic ones: a 15% share.
    const smallFixtures = await Promise.all(models.filter((f) => !f.includes('/arch/')).map(prepare));
    const archFixtures = await Promise.all(models.filter((f) => f.includes('/arch/')).map(prepare));
    const vocabFixtures = await Promise.all(vocabs.slice(0, 4).map(prepare));

    const rnd = prng(SEED);
    const outcomes: Record<string, number> = {};
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    for (let i = 0; i < CASES; i++) {
      const pool = i % 200 === 199 ? vocabFixtures : rnd() < 0.15 ? archFixtures : smallFixtures;
      const p = pool[Math.floor(rnd() * pool.length)];
      const outcome = await runCase(p, rnd);
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuStarted);
    const cpuSeconds = (cpu.user + cpu.system) / 1e6;
    console.log(
      `gguf fuzz: ${CASES} cases in ${seconds.toFixed(1)} s (${cpuSeconds.toFixed(1)} s CPU, seed ${SEED}): ${JSON.stringify(outcomes)}`,
    );
    expect(Object.values(outcomes).reduce((a, b) => a + b, 0)).toBe(CASES);
    expect(outcomes['gguf-invalid'] ?? 0).toBeGreaterThan(CASES / 4);
  });
});
