#!/usr/bin/env node
// `npm run build`: builds every target of vite.config.ts in turn (library ESM, script-tag IIFE, Node CLI, static demo)
// and the declaration files. Usage: node scripts/build.mjs [lib|iife|cli|demo|types …] (default: all).
import { build } from 'vite';
import { execSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const all = ['lib', 'iife', 'cli', 'demo', 'types'];
const targets = process.argv.slice(2).length ? process.argv.slice(2) : all;
for (const t of targets) {
  const started = performance.now();
  if (t === 'types') {
    execSync('npx tsc -p scripts/tsconfig.types.json', { cwd: root, stdio: 'inherit' });
  } else if (t === 'demo') {
    if (!existsSync(join(root, 'demo', 'index.html'))) continue;
    await build({ configFile: join(root, 'vite.config.ts'), mode: 'production', logLevel: 'warn' });
  } else {
    await build({ configFile: join(root, 'vite.config.ts'), mode: t, logLevel: 'warn' });
  }
  console.log(`[build] ${t} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}

// Size report of the script-tag bundle: what a page downloads, gzipped (WGSL is inlined in the JS; the WASM kernels
// apart, one variant is loaded). webgguf.js holds the worker clients, the model store and the errors; the engine is
// either the worker script (createWorkerEngine / createSharedWorkerEngine) or the in-thread module imported on the
// first createEngine call, each with the chunks it may import (every backend counted). Budget: each of those two
// downloads ≤ 200 KB gzipped — over it, the build fails (so a size regression shows in `npm test`).
const IIFE_GZIP_BUDGET = 200 * 1024;
if (targets.includes('iife') && existsSync(join(root, 'dist/iife/webgguf.js'))) {
  const dir = join(root, 'dist/iife');
  const files = ['webgguf.js', ...readdirSync(join(dir, 'assets')).map((f) => `assets/${f}`)];
  // The grammar engine (@mlc-ai/web-xgrammar, ~1.1 MB) is a separate file fetched only by a constrained request
  // (src/structured/xgrammar-loader.ts): reported apart, not part of either download below.
  const isGrammarEngine = (f) =>
    f.endsWith('.js') && readFileSync(join(dir, f), 'utf8').slice(0, 600).includes('global.xgrammar');
  const grammarFiles = files.filter(isGrammarEngine);
  // The IQ1–IQ3 codebook grids (src/quant/grids/iq-grid-tables.ts, ~25 KB gzipped) are fetched only when a model holds
  // such tensors (src/quant/iq-grids.ts): reported apart too.
  const gridFiles = files.filter((f) => /\/iq-grid-tables-[\w-]+\.js$/.test(f));
  // Feature chunks a text chat never fetches, imported on first use: the vision encoder (an engine given an mmproj,
  // src/api/open-vision.ts), the encoder models (bert family, src/model/load-any.ts), the embeddings and rerank
  // requests (src/api/local-engine.ts), the merged view of split models (src/io/split-model.ts), Node's image
  // decoders and the WGSL of recurrent / MoE / AltUp / IQ / subgroup-matrix kernels (src/backend/webgpu/
  // feature-shaders.ts, fetched by loadTransformer for a model that needs it) and the plain-TS reference backend
  // (cpu-ops: only `backend: 'cpu'` loads it, 'auto' picks WebGPU or WASM) the tool calling (syntax detection, generic prompt, grammar, stream gate and parsers: a request
  // with `tools`), the constrained-decoding engine around XGrammar (src/structured/grammar-engine.ts, a constrained
  // request), the encoder architecture entries (src/model/arch/index.ts LAZY_ARCHITECTURES), Node's file source, the WordPiece / unigram / RWKV / PLaMo-2 tokenizers (src/tokenizer/fragment-encoders.ts, a
  // vocabulary of those types) and the shared worker's hub (src/worker/shared-hub.ts, `createSharedWorkerEngine` only): reported
  // apart too. The model store's chunk worker (src/io/idb-chunk-reader.ts) is a chunk of its
  // own but every cached load fetches it, so it counts in the paths below.
  const featureFiles = files.filter((f) =>
    /\/(open-vision|grammar-engine|fragment-encoders|node-file-source|bert|nomic-bert|nomic-bert-moe|jina-bert-v2|jina-bert-v3|modern-bert|gemma-embedding|encoder|encoder-weights|embeddings|rerank|split-source|node-image-decoder|feature-shaders|cpu-ops|image-parts|rope-streams|altup|tool-call-reader|shared-hub|persisted-cache)-[\w-]+\.js$/.test(
      f,
    ),
  );
  const apart = new Set([...grammarFiles, ...gridFiles, ...featureFiles]);
  const byName = new Map(files.filter((f) => !apart.has(f)).map((f) => [f.split('/').pop(), f]));
  /** The files `start` loads, transitively, never entering a file matching `skip` (nor the grammar engine). */
  const closure = (start, skip) => {
    const seen = new Set([start]);
    for (const f of seen) {
      if (!f.endsWith('.js')) continue;
      const text = readFileSync(join(dir, f), 'utf8');
      for (const name of text.match(/[\w-]+\.(?:js|wasm)\b/g) ?? []) {
        const ref = byName.get(name);
        if (ref && !seen.has(ref) && !skip.test(ref)) seen.add(ref);
      }
    }
    return [...seen];
  };
  const sizes = (list) => {
    let raw = 0;
    let gz = 0;
    for (const f of list) {
      const bytes = readFileSync(join(dir, f));
      raw += bytes.length;
      gz += gzipSync(bytes, { level: 9 }).length;
    }
    return { raw, gz, text: `${(raw / 1024).toFixed(0)} KB (${(gz / 1024).toFixed(1)} KB gzipped)` };
  };
  const js = (list) => list.filter((f) => f.endsWith('.js'));
  const paths = {
    'worker engine': sizes(js(closure('webgguf.js', /in-thread-entry-/))),
    'in-thread engine': sizes(js(closure('webgguf.js', /\/worker-/))),
  };
  const core = sizes(['webgguf.js']);
  const wasmFiles = files.filter((f) => f.endsWith('.wasm'));
  const wasm = sizes(wasmFiles);
  console.log(
    `[build] iife sizes: webgguf.js ${core.text}; ` +
      Object.entries(paths)
        .map(([k, v]) => `with the ${k} ${v.text}`)
        .join('; ') +
      `; WASM kernels (${wasmFiles.length} builds, one is loaded) ${wasm.text}; lazy grammar engine ${sizes(grammarFiles).text}` +
      `; lazy IQ grids ${sizes(gridFiles).text}; lazy features (vision, image requests, encoders, rarer tokenizers, embeddings, split models, M-RoPE, AltUp, tool-call parsers, the shared-worker hub, the persisted prompt cache, recurrent/MoE/AltUp/IQ/subgroup-matrix WGSL, the cpu reference backend; worker and in-thread copies) ${sizes(featureFiles).text}`,
  );
  for (const [k, v] of Object.entries(paths)) {
    if (v.gz > IIFE_GZIP_BUDGET) {
      console.error(
        `[build] the script-tag bundle with the ${k} is ${(v.gz / 1024).toFixed(1)} KB gzipped, over its ${IIFE_GZIP_BUDGET / 1024} KB budget`,
      );
      process.exitCode = 1;
    }
  }
}
