#!/usr/bin/env node
// Runs a TypeScript entry (scripts, benchmarks) through Vite's module runner, so `?raw` WGSL imports and TS resolve
// exactly as in the library build. The entry's exported `main(args)` is called; its number is the exit status.
// With WEBGGUF_TS_BUNDLES=<dir> (no dev dependencies installed, e.g. the GPU machine) the entry's prebuilt bundle from
// `scripts/bundle-scripts.mjs` is imported instead. Usage: node scripts/run-ts.mjs <file.ts> [args…]
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { bundleName } from './ts-bundle-name.mjs';

// Node 20 ships relaxed SIMD (the WASM backend's fastest build) behind a flag; later versions have it on.
if (Number.parseInt(process.versions.node, 10) < 22) setFlagsFromString('--experimental-wasm-relaxed-simd');

const [entry, ...rest] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-ts.mjs <file.ts> [args…]');
  process.exit(2);
}
process.argv = [process.argv[0], resolve(entry), ...rest];
const bundles = process.env['WEBGGUF_TS_BUNDLES'];
const { module, close } = bundles
  ? { module: await import(pathToFileURL(resolve(bundles, bundleName(entry))).href), close: async () => {} }
  : await (await import('./ts-runner.mjs')).importTs(resolve(entry));
let code = 0;
try {
  if (typeof module.main === 'function') {
    const r = await module.main(rest);
    if (typeof r === 'number') code = r;
  }
} finally {
  await close();
}
process.exitCode = code;
