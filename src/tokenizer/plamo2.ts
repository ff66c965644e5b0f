/**
 * PLaMo-2 (`tokenizer.ggml.model = plamo2`), as llama.cpp's `llm_tokenizer_plamo2`: a dynamic programme from the end
 * of the text over code points. At each position every non-byte token that starts there is a candidate, longest
 * first, costing `-round(score × 1e4)`; a code point alone costs 1e7 and becomes its UTF-8 `<0xXX>` byte tokens. Ties
 * keep the first (longest) candidate. llama.cpp finds the candidates with an Aho-Corasick-style table over token
 * suffixes; walking a code-point trie of the tokens yields the same candidates in the same order.
 */

import { LlmError } from '../errors.js';
import { TokenAttr, type Vocab } from './vocab.js';

const INVALID_SCORE = -20000000;
const UNKNOWN_SCORE = -10000000;

/** C `std::round` (halves away from zero). */
function roundAway(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

/** Encodes raw-text fragments with a PLaMo-2 vocabulary. */
export class Plamo2Encoder {
  /** Forward trie over every token and every code-point suffix of a token: edges keyed `node * 0x110000 + cp`. */
  private readonly edges = new Map<number, number>();
  /** Per node: parent, depth (code points), whether the string is a token or token suffix, token id, integer score. */
  private readonly parent: number[] = [-1];
  private readonly depth: number[] = [0];
  private readonly inSet: boolean[] = [true];
  private readonly nodeId: number[] = [-1];
  private readonly nodeScore: number[] = [INVALID_SCORE];
  /** `node(rest) * 0x110000 + cp` → node(cp + rest) for every set string (llama.cpp's `to_suffix_id_`). */
  private readonly extend = new Map<number, number>();
  /** Byte → `<0xXX>` token id. Shape: (256,) i32 */
  private readonly bytes = new Int32Array(256);

  constructor(vocab: Vocab) {
    for (let id = 0; id < vocab.size; id++) {
      const text = vocab.tokens[id];
      // llama.cpp builds this tokenizer before the by-text attribute fixes.
      if (vocab.typeAttrs[id] & TokenAttr.Byte) {
        if (/^<0x[0-9A-Fa-f]{2}>$/.test(text)) this.bytes[parseInt(text.slice(3, 5), 16)] = id;
        continue;
      }
      const cps = Array.from(text, (ch) => ch.codePointAt(0)!);
      const node = this.insert(cps, 0);
      const s = vocab.scores[id];
      this.nodeId[node] = id; // a later token with the same text wins, as in llama.cpp's map
      this.nodeScore[node] = Number.isFinite(s) ? roundAway(s * 1e4) | 0 : INVALID_SCORE;
      for (let k = 1; k < cps.length; k++) this.insert(cps, k);
    }
    for (let b = 0; b < 256; b++) {
      // llama.cpp treats id 0 as "not set" too.
      if (this.bytes[b] === 0) {
        throw new LlmError(
          'tokenizer',
          `creating the PLaMo-2 tokenizer: byte token <0x${b.toString(16).toUpperCase().padStart(2, '0')}> is missing; re-convert the model`,
          {
            details: { byte: b },
          },
        );
      }
    }
  }

  /** Inserts `cps[from..]` as a set string; registers each set string's one-code-point extension. Returns its node. */
  private insert(cps: readonly number[], from: number): number {
    let node = 0;
    for (let j = from; j < cps.length; j++) {
      const key = node * 0x110000 + cps[j];
      let child = this.edges.get(key);
      if (child === undefined) {
        child = this.parent.length;
        this.parent.push(node);
        this.depth.push(this.depth[node] + 1);
        this.inSet.push(false);
        this.nodeId.push(-1);
        this.nodeScore.push(INVALID_SCORE);
        this.edges.set(key, child);
      }
      node = child;
    }
    if (!this.inSet[node]) {
      this.inSet[node] = true;
      // cps[from..] = cps[from] + cps[from+1..]; the rest is a suffix of a token too, so it is (or becomes) a set string.
      const rest = from + 1 < cps.length ? this.insert(cps, from + 1) : 0;
      this.extend.set(rest * 0x110000 + cps[from], node);
    }
    return node;
  }

  /** Appends the ids of one raw-text fragment to `out`. */
  encode(text: string, out: number[]): void {
    const cps: number[] = [];
    for (const ch of text) cps.push(ch.codePointAt(0)!);
    if (cps.length > 0 && cps[0] === 0xfeff) cps.shift(); // a leading byte-order mark is dropped
    const n = cps.length;
    if (n === 0) return;
    const cost = new Float64Array(n + 1).fill(2 ** 60);
    cost[n] = 0;
    const stepLen = new Int32Array(n + 1);
    const stepId = new Int32Array(n + 1);
    const { parent, depth, inSet, nodeId, nodeScore, extend } = this;
    // The state is the longest token suffix the text at i starts with — found, as llama.cpp does, by trying c + each
    // set-string prefix of the previous state, longest first, stopping early at a token scored exactly UNKNOWN_SCORE.
    let state = 0;
    for (let i = n - 1; i >= 0; i--) {
      const c = cps[i];
      let next = 0;
      let settled = false;
      for (let p = state; p > 0; p = parent[p]) {
        if (!inSet[p]) continue;
        next = extend.get(p * 0x110000 + c) ?? 0;
        if (next > 0 || nodeScore[p] === UNKNOWN_SCORE) {
          settled = true;
          break;
        }
      }
      if (!settled) next = extend.get(c) ?? 0;
      state = next;
      let stopped = false;
      for (let p = state; p > 0; p = parent[p]) {
        if (!inSet[p]) continue;
        const score = nodeScore[p];
        if (score > INVALID_SCORE) {
          const len = depth[p];
          const sc = cost[i + len] - score;
          if (sc < cost[i]) {
            cost[i] = sc;
            stepLen[i] = len;
            stepId[i] = nodeId[p];
          }
        }
        if (score === UNKNOWN_SCORE) {
          stopped = true;
          break;
        }
      }
      if (!stopped) {
        const sc = cost[i + 1] - UNKNOWN_SCORE;
        if (sc < cost[i]) {
          cost[i] = sc;
          stepLen[i] = 1;
          stepId[i] = -1;
        }
      }
    }
    for (let pos = 0; pos < n; pos += stepLen[pos]) {
      if (stepId[pos] >= 0) {
        out.push(stepId[pos]);
        continue;
      }
      const c = cps[pos];
      if (c < 0x80) out.push(this.bytes[c]);
      else {
        const s = c >= 0x10000 ? 4 : c >= 0x800 ? 3 : 2;
        for (let k = 0; k < s; k++) {
          const lead = k === 0 ? (0xf00 >> s) & 0xff : 0x80;
          out.push(this.bytes[lead | ((c >> ((s - k - 1) * 6)) & 0x3f)]);
        }
      }
    }
  }
}
