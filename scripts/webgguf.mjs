#!/usr/bin/env node
// `webgguf` CLI launcher: runs the built CLI (dist/cli/cli.js) when present, else the TypeScript source through
// Vite's module runner (development checkouts).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'cli.js');
if (existsSync(built) && !process.env.WEBGGUF_FROM_SOURCE) {
  const mod = await import(pathToFileURL(built).href);
  process.exitCode = await mod.main(process.argv.slice(2));
} else {
  const { importTs } = await import('./ts-runner.mjs');
  const { module, close } = await importTs(join(root, 'src', 'cli', 'main.ts'));
  try {
    process.exitCode = await module.main(process.argv.slice(2));
  } finally {
    await close();
  }
}
