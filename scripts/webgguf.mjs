#!/usr/bin/env node
// `webgguf` CLI launcher: runs the built CLI (dist/cli/cli.js) when present, else the TypeScript source through
// Vite's module runner (development checkouts).
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Node 20 ships relaxed SIMD (the WASM backend's fastest build) behind a flag; later versions have it on.
if (Number.parseInt(process.versions.node, 10) < 22) setFlagsFromString('--experimental-wasm-relaxed-simd');

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'cli.js');
if (existsSync(built) && !process.env.WEBGGUF_FROM_SOURCE) {
  const mod = await import(pathToFileURL(built).href);
  process.exitCode = await mod.main(process.argv.slice(2));
} else {
  const { importTs } = await import('./run-ts.mjs');
  const { module, close } = await importTs(join(root, 'src', 'cli', 'main.ts'));
  try {
    process.exitCode = await module.main(process.argv.slice(2));
  } finally {
    await close();
  }
}
