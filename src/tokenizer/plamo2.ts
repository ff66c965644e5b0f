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
  /** Trie edges keyed `node * 0x110000 + codepoint`. */
  private readonly edges = new Map<number, number>();
  /** Per node: token id (-1: none) and integer score. */
  private readonly nodeId: number[] = [-1];
  private readonly nodeScore: number[] = [INVALID_SCORE];
  /** Byte → `<0xXX>` token id. Shape: (256,) i32 */
  private readonly bytes = new Int32Array(256);

  constructor(vocab: Vocab) {
    for (let id = 0; id < vocab.size; id++) {
      const text = vocab.tokens[id];
      if (vocab.typeAttrs[id] & TokenAttr.Byte) {
        if (/^<0x[0-9A-Fa-f]{2}>$/.test(text)) this.bytes[parseInt(text.slice(3, 5), 16)] = id;
        continue;
      }
      let node = 0;
      for (const ch of text) {
        const key = node * 0x110000 + ch.codePointAt(0)!;
        let child = this.edges.get(key);
        if (child === undefined) {
          child = this.nodeId.length;
          this.nodeId.push(-1);
          this.nodeScore.push(INVALID_SCORE);
          this.edges.set(key, child);
        }
        node = child;
      }
      const s = vocab.scores[id];
      this.nodeId[node] = id; // a later token with the same text wins, as in llama.cpp's map
      this.nodeScore[node] = Number.isFinite(s) ? roundAway(s * 1e4) | 0 : INVALID_SCORE;
    }
    for (let b = 0; b < 256; b++) {
      // llama.cpp treats id 0 as "not set" too.
      if (this.bytes[b] === 0) {
        throw new LlmError('tokenizer', `creating the PLaMo-2 tokenizer: byte token <0x${b.toString(16).toUpperCase().padStart(2, '0')}> is missing; re-convert the model`, {
          details: { byte: b },
        });
      }
    }
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
    const lens: number[] = [];
    const nodes: number[] = [];
    for (let i = n - 1; i >= 0; i--) {
      lens.length = 0;
      nodes.length = 0;
      let node = 0;
      for (let j = i; j < n; j++) {
        const child = this.edges.get(node * 0x110000 + cps[j]);
        if (child === undefined) break;
        node = child;
        if (this.nodeId[node] >= 0) {
          lens.push(j - i + 1);
          nodes.push(node);
        }
      }
      let stopped = false;
      for (let k = lens.length - 1; k >= 0; k--) {
        const score = this.nodeScore[nodes[k]];
        if (score > INVALID_SCORE) {
          const s = cost[i + lens[k]] - score;
          if (s < cost[i]) {
            cost[i] = s;
            stepLen[i] = lens[k];
            stepId[i] = this.nodeId[nodes[k]];
          }
        }
        if (score === UNKNOWN_SCORE) {
          stopped = true;
          break;
        }
      }
      if (!stopped) {
        const s = cost[i + 1] - UNKNOWN_SCORE;
        if (s < cost[i]) {
          cost[i] = s;
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
        const s = 1 + (c >= 0x800 ? 1 : 0) + (c >= 0x10000 ? 1 : 0) + 1;
        for (let k = 0; k < s; k++) {
          const lead = k === 0 ? (0xf00 >> s) & 0xff : 0x80;
          out.push(this.bytes[lead | ((c >> ((s - k - 1) * 6)) & 0x3f)]);
        }
      }
    }
  }
}
