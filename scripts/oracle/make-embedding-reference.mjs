#!/usr/bin/env node
// Embedding reference JSON for a GGUF model with a pooling type, from real llama.cpp (node-llama-cpp 3.22.1 prebuilt,
// CPU, 1 thread): for each input text, the tokens llama.cpp's embedding path feeds (BOS/EOS as the vocabulary says)
// and the pooled, un-normalised sequence embedding (`llama_get_embeddings_seq`), with an F32 KV cache and flash
// attention off — the embedding context node-llama-cpp's `createEmbeddingContext` builds, with F32 KV.
// Usage: node scripts/oracle/make-embedding-reference.mjs <model.gguf> [--text "…" …] [--out file.json]
//        (default out: <model without .gguf>.embeddings.json beside the model)

import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import { f32Decimal } from './make-reference.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const CONTEXT_SIZE = 256;

/** Inputs of different lengths (one to a few dozen tokens), so a batch mixes short and long sequences. */
export const DEFAULT_TEXTS = [
  'Hi',
  'Once upon a time, there was a robot.',
  'The little dog ran to the park. He saw a big red ball and wanted to play with it all day long.',
  'Lily',
];

/** The tokens llama.cpp's embedding path evaluates for `text` (node-llama-cpp's `_prepareInput`). */
function embeddingTokens(model, text) {
  const tokens = [...model.tokenize(text, false)];
  if (model.tokens.shouldPrependBosToken && model.tokens.bos != null && tokens[0] !== model.tokens.bos)
    tokens.unshift(model.tokens.bos);
  if (model.tokens.shouldAppendEosToken && model.tokens.eos != null && tokens.at(-1) !== model.tokens.eos)
    tokens.push(model.tokens.eos);
  return tokens;
}

/** Builds the embedding reference object for `modelPath`. */
export async function makeEmbeddingReference(modelPath, { texts = DEFAULT_TEXTS } = {}) {
  const llama = await getLlama({ gpu: false, build: 'never', logLevel: LlamaLogLevel.error });
  const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
  // The context createEmbeddingContext makes (embeddings on), but with an F32 KV cache: the conformance yardstick.
  const context = await model.createContext({
    contextSize: CONTEXT_SIZE,
    batchSize: CONTEXT_SIZE,
    threads: 1,
    _embeddings: true,
    experimentalKvCacheKeyType: 'F32',
    experimentalKvCacheValueType: 'F32',
    flashAttention: false,
  });
  const inputs = [];
  try {
    const seq = context.getSequence();
    for (const text of texts) {
      const tokens = embeddingTokens(model, text);
      await seq.eraseContextTokenRanges([{ start: 0, end: seq.nextTokenIndex }]);
      for await (const _ of seq.evaluate(tokens, { _noSampling: true })) break;
      const embedding = Array.from(context._ctx.getEmbedding(tokens.length), f32Decimal);
      inputs.push({ text, tokens, embedding });
    }
  } finally {
    await context.dispose();
  }
  const pooling = model.fileInfo.metadata?.[model.fileInfo.metadata.general.architecture]?.pooling_type ?? null;
  await model.dispose();
  return {
    model: basename(modelPath),
    model_sha256: createHash('sha256').update(readFileSync(modelPath)).digest('hex'),
    producer: {
      tool: 'node-llama-cpp 3.22.1 (prebuilt, CPU backend) via webgguf scripts/oracle/make-embedding-reference.mjs',
      llama_cpp: (({ llamaCppGithubRepo, tag }) => ({ repo: llamaCppGithubRepo, release: tag }))(
        JSON.parse(readFileSync(join(here, 'node_modules/node-llama-cpp/llama/llama.cpp.info.json'), 'utf8')),
      ),
      threads: 1,
      context_size: CONTEXT_SIZE,
      kv_cache: 'F32',
    },
    pooling_type: pooling,
    note:
      'embedding = llama_get_embeddings_seq after evaluating tokens as one batch (pooled, NOT normalised); ' +
      'float32 values as the shortest decimal that round-trips.',
    inputs,
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const texts = args.flatMap((a, i) => (args[i - 1] === '--text' ? [a] : []));
  const outIdx = args.indexOf('--out');
  const modelPath = args.find((a, i) => !a.startsWith('--') && !['--text', '--out'].includes(args[i - 1]));
  if (!modelPath) {
    console.error('usage: node scripts/oracle/make-embedding-reference.mjs <model.gguf> [--text "…" …] [--out f.json]');
    process.exit(2);
  }
  const ref = await makeEmbeddingReference(resolve(modelPath), texts.length > 0 ? { texts } : {});
  const out = resolve(outIdx >= 0 ? args[outIdx + 1] : modelPath.replace(/\.gguf$/, '') + '.embeddings.json');
  writeFileSync(out, JSON.stringify(ref) + '\n');
  console.log(out);
}
