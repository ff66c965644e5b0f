/**
 * Conformance with llama.cpp: every vocab in ../shared/tokenizer-vectors with `.inp`/`.out` (and in the folders named
 * by WEBGGUF_TOKENIZER_VECTORS), plus stories260K. One table-driven driver; ids are llama.cpp's
 * `tokenize(text, add_special=false, parse_special=false)`.
 */

import { existsSync, readdirSync } from 'node:fs';
import { basename } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedPath } from '../../helpers/shared-path.js';
import { loadTokenizer, readVectors } from './vocab-fixtures.js';

const VECTOR_DIR = sharedPath('tokenizer-vectors');
const vectorsIn = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.gguf') && existsSync(`${dir}/${f}.inp`))
    .map((f) => `${dir}/${f}`);
/**
 * More vector folders, ':'-separated (e.g. the `models/` folder of the llama.cpp snapshot, which also has
 * ggml-vocab-gemma-4): WEBGGUF_TOKENIZER_VECTORS=/path/to/llama.cpp/models npx vitest run test/unit/tokenizer
 */
const EXTRA = (process.env['WEBGGUF_TOKENIZER_VECTORS'] ?? '').split(':').filter((d) => d !== '');
const TABLE: string[] = [
  ...vectorsIn(VECTOR_DIR),
  ...EXTRA.flatMap(vectorsIn).filter((p) => !existsSync(`${VECTOR_DIR}/${basename(p)}`)),
  sharedPath('models', 'stories260K.gguf'),
];

describe('llama.cpp tokenizer vectors', () => {
  it('finds the vector files', () => {
    expect(TABLE.length).toBeGreaterThanOrEqual(14);
  });

  for (const gguf of TABLE) {
    it(basename(gguf), async () => {
      const tok = await loadTokenizer(gguf);
      const cases = readVectors(`${gguf}.inp`);
      expect(cases.length).toBeGreaterThan(0);
      const failures: string[] = [];
      for (const c of cases) {
        const got = tok.encode(c.text);
        if (JSON.stringify(got) !== JSON.stringify(c.ids)) {
          failures.push(`${JSON.stringify(c.text).slice(0, 80)}\n   want ${c.ids.join(' ')}\n   got  ${got.join(' ')}`);
        }
      }
      expect(failures, `${failures.length}/${cases.length} cases differ:\n${failures.join('\n')}`).toEqual([]);
    });
  }
});
