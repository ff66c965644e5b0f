#!/usr/bin/env node
// Runs a TypeScript entry (scripts, benchmarks) through Vite's module runner, so `?raw` WGSL imports and TS resolve
// exactly as in the library build. The entry's exported `main(args)` is called; its number is the exit status.
// Usage: node scripts/run-ts.mjs <file.ts> [args…]
import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { importTs } from './ts-runner.mjs';

// Node 20 ships relaxed SIMD (the WASM backend's fastest build) behind a flag; later versions have it on.
if (Number.parseInt(process.versions.node, 10) < 22) setFlagsFromString('--experimental-wasm-relaxed-simd');

const [entry, ...rest] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-ts.mjs <file.ts> [args…]');
  process.exit(2);
}
process.argv = [process.argv[0], resolve(entry), ...rest];
const { module, close } = await importTs(resolve(entry));
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
