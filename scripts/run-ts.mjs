#!/usr/bin/env node
// The one way webgguf runs its TypeScript outside the library build (CLI in development, scripts, benchmarks):
// through a Vite server-side module runner that stays open, so `?raw` WGSL imports, lazy `import()`s and TS resolve
// exactly as in the library build.
// As a command: `node scripts/run-ts.mjs <file.ts> [args…]` calls the entry's exported `main(args)`; its number is the
// exit status. With WEBGGUF_TS_BUNDLES=<dir> (no dev dependencies installed, e.g. the GPU machine) the entry's
// prebuilt bundle from `scripts/bundle-scripts.mjs` is imported instead.
// As a module: `importTs(file)` (used by the `webgguf` launcher) and `bundleName(entry)` (used by bundle-scripts.mjs).
import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** Imports `file` (absolute path) through a Vite module runner; returns its namespace and a `close` for the runner. */
export async function importTs(file) {
  const { createServer, createServerModuleRunner } = await import('vite');
  const server = await createServer({
    configFile: false,
    logLevel: 'error',
    server: { middlewareMode: true, hmr: false, ws: false },
    appType: 'custom',
    optimizeDeps: { noDiscovery: true, include: [] },
  });
  const runner = createServerModuleRunner(server.environments.ssr, { hmr: false });
  const mod = await runner.import(file);
  const close = async () => {
    await runner.close();
    await server.close();
  };
  return { module: mod, close };
}

/**
 * The file name under dist/scripts/ of a bundled TypeScript entry (a path relative to the repository root, or
 * absolute): 'test/bench/bench.ts' → 'test__bench__bench.mjs'.
 */
export function bundleName(entry) {
  const rel = isAbsolute(entry) ? relative(root, entry) : entry;
  return rel.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\//g, '__').replace(/\.ts$/, '.mjs');
}

async function main() {
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
    : await importTs(resolve(entry));
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
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
