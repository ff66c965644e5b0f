#!/usr/bin/env node
// Bundles the TypeScript tools that `scripts/run-ts.mjs` runs (benchmarks, model generators) into self-contained ES
// modules under dist/scripts/, for machines that have Node but not the dev dependencies (the GPU machine of
// `scripts/device-bench.sh`). WGSL `?raw` imports are inlined; only `webgpu` and Node built-ins stay external.
// Usage: node scripts/bundle-scripts.mjs [entry.ts …]   then: WEBGGUF_TS_BUNDLES=dist/scripts node scripts/run-ts.mjs …
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { bundleName } from './run-ts.mjs';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const DEFAULT_ENTRIES = [
  'test/bench/bench.ts',
  'test/bench/run-ours.ts',
  'test/bench/webgpu.bench.ts',
  'test/bench/gemv-kernels.bench.ts',
  'scripts/synthetic/make-benchmark-models.ts',
];
const entries = process.argv.slice(2).length > 0 ? process.argv.slice(2) : DEFAULT_ENTRIES;

await build({
  configFile: false,
  root,
  logLevel: 'warn',
  publicDir: false,
  build: {
    outDir: resolve(root, 'dist/scripts'),
    emptyOutDir: true,
    target: 'node20',
    minify: false,
    ssr: true,
    rollupOptions: {
      input: Object.fromEntries(entries.map((e) => [bundleName(e).replace(/\.mjs$/, ''), resolve(root, e)])),
      output: { entryFileNames: '[name].mjs', chunkFileNames: 'chunks/[name]-[hash].mjs', format: 'es' },
    },
  },
  // Browser benches (vite, Playwright) are loaded only with --browser: kept external, never on the GPU machine.
  ssr: { noExternal: true, external: ['webgpu', 'vite', 'playwright', 'playwright-core', '@playwright/test'] },
});
console.log(`bundled ${entries.length} entries into dist/scripts/`);
