/**
 * Test helpers: GGUF metadata of the shared vocab fixtures (read with our own `parseGguf` over `NodeFileSource`,
 * cached per path) and llama.cpp's tokenizer vector files (`.inp` cases separated by `__ggml_vocab_test__`, `.out`
 * one line of space-separated ids per case).
 */

import { readFileSync } from 'node:fs';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufValue } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { createTokenizer } from '../../../src/tokenizer/index.js';
import type { VocabTokenizer } from '../../../src/tokenizer/vocab-tokenizer.js';

const metaCache = new Map<string, Promise<Readonly<Record<string, GgufValue>>>>();

/** Metadata of the GGUF file at `path`. */
export function loadMetadata(path: string): Promise<Readonly<Record<string, GgufValue>>> {
  let p = metaCache.get(path);
  if (!p) {
    p = (async () => {
      const source = await NodeFileSource.open(path);
      try {
        return (await parseGguf(source)).metadata;
      } finally {
        await source.close();
      }
    })();
    metaCache.set(path, p);
  }
  return p;
}

const tokCache = new Map<string, Promise<VocabTokenizer>>();

/** The tokenizer of the GGUF file at `path` (one per path and test file: tokenizers are immutable). */
export function loadTokenizer(path: string): Promise<VocabTokenizer> {
  let p = tokCache.get(path);
  if (!p) {
    p = loadMetadata(path).then(createTokenizer);
    tokCache.set(path, p);
  }
  return p;
}

/** One llama.cpp tokenizer test case. */
export interface VectorCase {
  readonly text: string;
  readonly ids: readonly number[];
}

/** Reads `<file>.inp` and the `.out` beside it. */
export function readVectors(inpPath: string): VectorCase[] {
  const inputs = readFileSync(inpPath, 'utf8').split('\n__ggml_vocab_test__\n');
  inputs.pop(); // the file ends with a separator
  const outs = readFileSync(inpPath.replace(/\.inp$/, '.out'), 'utf8').split('\n');
  return inputs.map((text, i) => ({
    text,
    ids: (outs[i] ?? '')
      .split(' ')
      .filter((s) => s !== '')
      .map(Number),
  }));
}
