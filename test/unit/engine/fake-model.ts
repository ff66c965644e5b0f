/**
 * Test doubles for engine and API tests: a byte-level `Tokenizer` with ChatML specials and a `Transformer` whose
 * logits are a deterministic function of the whole token history of a slot (so any KV bookkeeping mistake —
 * reusing the wrong prefix, a stale cell — changes the output). It counts evaluated tokens and bytes read back.
 */

import type { Ops, TopK } from '../../../src/backend/ops.js';
import { LlmError } from '../../../src/errors.js';
import type { ModelConfig } from '../../../src/model/config.js';
import type { LogitsWanted, SequenceToken, Transformer } from '../../../src/model/model.js';
import type { DecodeOptions, EncodeOptions, StreamDecoder, Tokenizer } from '../../../src/tokenizer/tokenizer.js';

/** Ids 0…255 are bytes; then the specials. */
export const BOS = 256;
export const EOS = 257;
const IM_START = 258;
const IM_END = 259;
const SPECIALS: [string, number][] = [
  ['<s>', BOS],
  ['</s>', EOS],
  ['<|im_start|>', IM_START],
  ['<|im_end|>', IM_END],
];
const FAKE_VOCAB = 260;

/** A byte-level tokenizer: one token per UTF-8 byte, ChatML markers as specials. */
export function createFakeTokenizer(): Tokenizer {
  const enc = new TextEncoder();
  const bytesOf = (id: number): Uint8Array => (id < 256 ? Uint8Array.of(id) : new Uint8Array(0));
  const text = (id: number) => SPECIALS.find(([, i]) => i === id)?.[0] ?? '';
  return {
    model: 'fake',
    pre: '',
    vocabSize: FAKE_VOCAB,
    bosId: BOS,
    eosId: EOS,
    addBos: true,
    addEos: false,
    eogIds: new Set([EOS, IM_END]),
    tokenText: (id) => (id < 256 ? String.fromCharCode(id) : text(id)),
    isControl: (id) => id >= 256,
    encode(s: string, o: EncodeOptions = {}) {
      const out: number[] = o.addSpecial ? [BOS] : [];
      let i = 0;
      while (i < s.length) {
        const sp = o.parseSpecial ? SPECIALS.find(([t]) => s.startsWith(t, i)) : undefined;
        if (sp) {
          out.push(sp[1]);
          i += sp[0].length;
          continue;
        }
        const cp = s.codePointAt(i)!;
        const ch = String.fromCodePoint(cp);
        for (const b of enc.encode(ch)) out.push(b);
        i += ch.length;
      }
      return out;
    },
    decode(ids: readonly number[], o: DecodeOptions = {}) {
      const parts: number[] = [];
      let s = '';
      const flush = () => {
        s += new TextDecoder().decode(Uint8Array.from(parts));
        parts.length = 0;
      };
      for (const id of ids) {
        if (id < 256) parts.push(id);
        else if (o.renderSpecial) {
          flush();
          s += text(id);
        }
      }
      flush();
      return s;
    },
    tokenBytes: (id) => bytesOf(id),
    createStreamDecoder(o: DecodeOptions = {}): StreamDecoder {
      const dec = new TextDecoder('utf-8');
      return {
        push: (id) => (id < 256 ? dec.decode(Uint8Array.of(id), { stream: true }) : o.renderSpecial ? text(id) : ''),
        flush: () => dec.decode(),
      };
    },
  };
}

/** Options of the fake transformer. */
export interface FakeTransformerOptions {
  nSlots?: number;
  contextLength?: number;
  ubatchSize?: number;
  /** Preferred next token for a history (gets a logit boost of 20); default: pseudo-random logits only. */
  script?: (history: readonly number[]) => number | null;
  /** Milliseconds each eval chunk waits (lets tests abort mid-request). */
  delayMs?: number;
}

/** Counters the tests assert on. */
export interface FakeCounters {
  evalCalls: number;
  evaluatedTokens: number;
  bytesReadBack: number;
  copies: number;
  destroyed: boolean;
  /** Per eval call: [startPos, nTokens, logits wanted]. */
  calls: [number, number, LogitsWanted][];
}

function hashHistory(cells: Int32Array, n: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < n; i++) {
    h ^= cells[i] + 1;
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** A `Transformer` whose logits depend only on the slot's cells 0 … pos. */
export function createFakeTransformer(
  o: FakeTransformerOptions = {},
): Transformer & { counters: FakeCounters; cells: Int32Array[] } {
  const nSlots = o.nSlots ?? 2;
  const contextLength = o.contextLength ?? 256;
  const ubatchSize = o.ubatchSize ?? 16;
  const cells = Array.from({ length: nSlots }, () => new Int32Array(contextLength).fill(-1));
  const counters: FakeCounters = {
    evalCalls: 0,
    evaluatedTokens: 0,
    bytesReadBack: 0,
    copies: 0,
    destroyed: false,
    calls: [],
  };
  /** Logits of the last eval (one row) or of each row of the last evalRows. */
  let lastRows: Float32Array[] = [];
  const rowOf = (row?: number): Float32Array => {
    const r = lastRows[row ?? lastRows.length - 1];
    if (!r) throw new RangeError(`fake transformer: no logits row ${row}`);
    return r;
  };
  const logitsFor = (slot: number, n: number): Float32Array => {
    const c = cells[slot];
    const out = new Float32Array(FAKE_VOCAB);
    let h = hashHistory(c, n);
    for (let v = 0; v < FAKE_VOCAB; v++) {
      h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d) >>> 0;
      out[v] = ((h % 10000) / 10000) * 6 - 3;
    }
    const want = o.script?.(Array.from(c.subarray(0, n)));
    if (want !== null && want !== undefined) out[want] += 20;
    return out;
  };
  const config = {
    arch: 'fake',
    name: 'fake-model',
    vocabSize: FAKE_VOCAB,
    contextLength: 4096,
  } as unknown as ModelConfig;
  return {
    config,
    ops: { name: 'fake', description: 'fake ops' } as unknown as Ops,
    ubatchSize,
    maxSequenceRows: nSlots > 1 ? nSlots : 0,
    counters,
    cells,
    async evalRows(rows: readonly SequenceToken[], signal?: AbortSignal) {
      if (counters.destroyed) throw new Error('fake transformer used after destroy');
      if (signal?.aborted) throw new LlmError('aborted', 'eval was aborted', { cause: signal.reason });
      if (rows.length === 0 || rows.length > nSlots || new Set(rows.map((r) => r.slot)).size !== rows.length)
        throw new RangeError(`bad evalRows of ${rows.length} rows`);
      counters.evalCalls++;
      counters.calls.push([rows[0].pos, rows.length, 'all']);
      await new Promise((r) => setTimeout(r, o.delayMs ?? 0));
      for (const r of rows) {
        if (r.pos >= contextLength) throw new RangeError(`bad evalRows pos ${r.pos}`);
        cells[r.slot][r.pos] = r.token;
      }
      counters.evaluatedTokens += rows.length;
      lastRows = rows.map((r) => logitsFor(r.slot, r.pos + 1));
    },
    async eval(
      tokens: Int32Array,
      startPos: number,
      slot: number,
      options: { logits?: LogitsWanted; signal?: AbortSignal } = {},
    ) {
      if (counters.destroyed) throw new Error('fake transformer used after destroy');
      if (slot < 0 || slot >= nSlots || startPos + tokens.length > contextLength)
        throw new RangeError(`bad eval slot ${slot} pos ${startPos}+${tokens.length}`);
      counters.evalCalls++;
      counters.calls.push([startPos, tokens.length, options.logits ?? 'last']);
      for (let s = 0; s < tokens.length; s += ubatchSize) {
        if (options.signal?.aborted)
          throw new LlmError('aborted', 'eval was aborted', { cause: options.signal.reason });
        await new Promise((r) => setTimeout(r, o.delayMs ?? 0));
        const chunk = tokens.subarray(s, s + ubatchSize);
        cells[slot].set(chunk, startPos + s);
        counters.evaluatedTokens += chunk.length;
      }
      const end = startPos + tokens.length;
      lastRows = [logitsFor(slot, end)];
      return null;
    },
    async readLogits(row?: number) {
      const last = rowOf(row);
      counters.bytesReadBack += last.byteLength;
      return last.slice();
    },
    async argmax(row?: number) {
      const last = rowOf(row);
      counters.bytesReadBack += 4;
      let b = 0;
      for (let i = 1; i < last.length; i++) if (last[i] > last[b]) b = i;
      return b;
    },
    async topK(k: number, row?: number): Promise<TopK> {
      const last = rowOf(row);
      const ids = Array.from(last.keys())
        .sort((a, b) => last[b] - last[a] || a - b)
        .slice(0, k);
      counters.bytesReadBack += k * 8;
      return { ids: Int32Array.from(ids), logits: Float32Array.from(ids.map((i) => last[i])) };
    },
    hasRecurrentState: false,
    async readState() {
      return null;
    },
    writeState() {},
    copySlot(src: number, dst: number, n: number) {
      counters.copies++;
      cells[dst].set(cells[src].subarray(0, n), 0);
    },
    destroy() {
      counters.destroyed = true;
    },
  };
}

/** A script that spells `text` (as bytes) after the last occurrence of the assistant marker, then ends with `end`. */
export function spellScript(text: string, end = IM_END): (history: readonly number[]) => number | null {
  const bytes = Array.from(new TextEncoder().encode(text));
  return (h) => {
    let start = h.lastIndexOf(IM_START);
    // After "<|im_start|>assistant\n".
    start = start < 0 ? h.length : start + 1 + 'assistant\n'.length;
    const done = Math.max(0, h.length - start);
    return done < bytes.length ? bytes[done] : end;
  };
}

/**
 * A script that spells `text` (as bytes) after the prompt, then ends with IM_END: a call whose history does not extend
 * the previous one by one token is a new prompt and starts anew (no marker needed, any template).
 */
export function spellAfterPrompt(text: string): (h: readonly number[]) => number | null {
  const bytes = Array.from(new TextEncoder().encode(text));
  let prev: readonly number[] = [];
  let start = 0;
  return (h) => {
    const continues = h.length === prev.length + 1 && prev.every((t, i) => h[i] === t);
    if (!continues) start = h.length;
    prev = h.slice();
    const done = h.length - start;
    return done < bytes.length ? bytes[done] : IM_END;
  };
}
