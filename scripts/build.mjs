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

// Size report of the script-tag bundle: what a page downloads (webgguf.js + its worker and the worker's chunks; WGSL
// is inlined in the JS) gzipped, and the WASM kernels apart. Budget: ≤ 216 KB gzipped JS+WGSL — over it, the build
// fails (so a size regression shows in `npm test`).
// 216 KB since llama.cpp-conformant chat templates (capability probes, budgets, llama.cpp's Jinja semantics): about
// 9 KB gzipped per engine copy, and the bundle carries two (the in-thread engine and the worker's).
const IIFE_GZIP_BUDGET = 216 * 1024;
if (targets.includes('iife') && existsSync(join(root, 'dist/iife/webgguf.js'))) {
  const dir = join(root, 'dist/iife');
  // The grammar engine (@mlc-ai/web-xgrammar, ~1.1 MB) is a separate file fetched only by a constrained request
  // (src/structured/xgrammar-loader.ts): reported apart, not part of the script-tag core.
  const isGrammarEngine = (f) => f.endsWith('.js') && readFileSync(join(dir, f), 'utf8').slice(0, 600).includes('global.xgrammar');
  const all = ['webgguf.js', ...readdirSync(join(dir, 'assets')).map((f) => `assets/${f}`)];
  const files = all.filter((f) => !isGrammarEngine(f));
  const grammarFiles = all.filter(isGrammarEngine);
  const sizes = (re) => {
    let raw = 0;
    let gz = 0;
    for (const f of files.filter((f) => re.test(f))) {
      const bytes = readFileSync(join(dir, f));
      raw += bytes.length;
      gz += gzipSync(bytes, { level: 9 }).length;
    }
    return { raw, gz, text: `${(raw / 1024).toFixed(0)} KB (${(gz / 1024).toFixed(0)} KB gzipped)` };
  };
  const js = sizes(/\.js$/);
  const grammarGz = grammarFiles.reduce((n, f) => n + gzipSync(readFileSync(join(dir, f)), { level: 9 }).length, 0);
  console.log(`[build] iife sizes: JS+WGSL ${js.text}; WASM kernels (6 variants, one is loaded) ${sizes(/\.wasm$/).text}; ` +
    `lazy grammar engine ${grammarFiles.length} file(s), ${(grammarGz / 1024).toFixed(0)} KB gzipped`);
  if (js.gz > IIFE_GZIP_BUDGET) {
    console.error(`[build] the script-tag bundle is ${(js.gz / 1024).toFixed(1)} KB gzipped, over its ${IIFE_GZIP_BUDGET / 1024} KB budget`);
    process.exitCode = 1;
  }
}
