#!/usr/bin/env node
// `npm run build`: builds every target of vite.config.ts in turn (library ESM, script-tag IIFE, Node CLI, static demo)
// and the declaration files. Usage: node scripts/build.mjs [lib|iife|cli|demo|types …] (default: all).
import { build } from 'vite';
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
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
