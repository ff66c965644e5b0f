/**
 * RWKV world tokenizer (`tokenizer.ggml.model = rwkv`), as llama.cpp's `llm_tokenizer_rwkv_session`: token texts are
 * unescaped (`\\n`, `\\xHH` …) into bytes and put in a byte trie; the text's UTF-8 is then cut greedily, taking the
 * longest token at each position. A byte that starts no token becomes the unknown token.
 */

import { LlmError } from '../errors.js';
import { ByteTrie } from './byte-trie.js';
import { unescapeRwkv } from './detokenizer.js';
import { utf8Encode } from './unicode.js';
import type { Vocab } from './vocab.js';

/** Encodes raw-text fragments with an RWKV vocabulary. */
export class RwkvEncoder {
  private readonly trie = new ByteTrie();

  constructor(private readonly vocab: Vocab) {
    for (let id = 0; id < vocab.size; id++) this.trie.insert(unescapeRwkv(vocab.tokens[id]), id);
  }

  /** Appends the ids of one raw-text fragment to `out`. */
  encode(text: string, out: number[]): void {
    const bytes = utf8Encode(text);
    const { trie } = this;
    let pos = 0;
    while (pos < bytes.length) {
      let node = trie.child(0, bytes[pos]);
      let bestId = -1;
      let bestEnd = pos;
      for (let i = pos; node >= 0; ) {
        const id = trie.value(node);
        if (id >= 0) {
          bestId = id;
          bestEnd = i + 1;
        }
        if (++i >= bytes.length) break;
        node = trie.child(node, bytes[i]);
      }
      if (bestId < 0) {
        // llama.cpp pushes the unknown token for a byte no token starts with (and would loop forever on a byte that
        // only starts longer tokens; here that byte is unknown too).
        out.push(this.unknown(bytes[pos]));
        pos++;
        continue;
      }
      out.push(bestId);
      pos = bestEnd;
    }
  }

  private unknown(b: number): number {
    const unk = this.vocab.unkId;
    if (unk !== null) return unk;
    throw new LlmError(
      'tokenizer',
      `tokenizing: byte 0x${b.toString(16).padStart(2, '0')} starts no RWKV token and the vocabulary has no unknown token`,
      { details: { byte: b } },
    );
  }
}
