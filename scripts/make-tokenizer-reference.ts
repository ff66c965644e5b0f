/**
 * Writes test/fixtures/tokenizers/<name>.json: llama.cpp's own tokenizer answers (through the optional oracle in
 * scripts/oracle, node-llama-cpp's prebuilt libllama) for the synthetic vocabularies of
 * test/unit/tokenizer/synthetic-vocabs.ts — token ids for every case, every token's piece, detokenized texts — with
 * the sha256 of the GGUF they came from. Usage: node scripts/run-ts.mjs scripts/make-tokenizer-reference.ts [outDir]
 */

import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SYNTHETIC_SEED } from '../test/unit/tokenizer/synthetic-texts.js';
import { syntheticVocabGguf, syntheticVocabs } from '../test/unit/tokenizer/synthetic-vocabs.js';

interface OracleResult {
  cases: { text: string; addSpecial: boolean; parseSpecial: boolean; ids: number[] }[];
  pieces: [string, string][];
  detok: { ids: number[]; text: string; textSpecial: string }[];
}

/** Entry point for scripts/run-ts.mjs. */
export function main(args: string[]): number {
  const outDir = resolve(args[0] ?? 'test/fixtures/tokenizers');
  const tmp = mkdtempSync(join(tmpdir(), 'tok-ref-'));
  try {
    const vocabs = syntheticVocabs();
    const job = vocabs.map((v) => {
      const gguf = join(tmp, `${v.name}.gguf`);
      writeFileSync(gguf, syntheticVocabGguf(v));
      return { gguf, cases: v.cases };
    });
    writeFileSync(join(tmp, 'job.json'), JSON.stringify(job));
    const r = spawnSync(
      process.execPath,
      ['scripts/oracle/tokenize-vocab.mjs', join(tmp, 'job.json'), join(tmp, 'out.json')],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
      },
    );
    if (r.status !== 0) {
      console.error('the oracle failed (is scripts/oracle installed? npm install --prefix scripts/oracle)');
      return 1;
    }
    const results = JSON.parse(readFileSync(join(tmp, 'out.json'), 'utf8')) as OracleResult[];
    mkdirSync(outDir, { recursive: true });
    vocabs.forEach((v, i) => {
      const sha256 = createHash('sha256').update(readFileSync(job[i].gguf)).digest('hex');
      const doc = {
        about:
          'llama.cpp v0.5.0 (node-llama-cpp 3.22.1) tokenizer answers for a synthetic vocabulary; regenerate with scripts/make-tokenizer-reference.ts',
        name: v.name,
        seed: SYNTHETIC_SEED,
        sha256,
        ...results[i],
      };
      writeFileSync(join(outDir, `${v.name}.json`), JSON.stringify(doc) + '\n');
      console.log(
        `${v.name}: ${results[i].cases.length} cases, ${results[i].pieces.length} tokens, sha256 ${sha256.slice(0, 16)}…`,
      );
    });
    return 0;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
