/**
 * Vite config. `npm start` serves the demo chat (demo/) with COOP/COEP so WASM threads work; `npm run build` runs
 * scripts/build.mjs, which builds each target below by mode; vitest runs the Node tests (unit, conformance, kernels
 * on Dawn + lavapipe).
 *   --mode lib   → dist/lib/webgguf.js (ES module library; worker, WGSL and WASM as sibling assets)
 *   --mode iife  → dist/iife/webgguf.js (script tag: window.WebGGUF; assets resolve relative to the script's URL)
 *   --mode cli   → dist/cli/cli.js (Node CLI, `webgguf`)
 *   (default)    → dist/demo/ (static demo chat + PWA, deployable anywhere)
 */
import { defineConfig } from 'vitest/config';
import type { Plugin } from 'vite';
import { resolve } from 'node:path';

/** Emits precache.json: every file of the demo build, for the service worker to cache at install. */
function precacheList(): Plugin {
  return {
    name: 'webgguf-precache-list',
    apply: 'build',
    generateBundle(_options, bundle) {
      const files = Object.keys(bundle).filter((f) => !f.endsWith('.map'));
      this.emitFile({ type: 'asset', fileName: 'precache.json', source: JSON.stringify(files) });
    },
  };
}

const root = import.meta.dirname;
const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'cross-origin',
};

export default defineConfig(({ mode }) => {
  const test = {
    include: ['test/unit/**/*.test.ts', 'test/kernels/**/*.test.ts', 'test/reference/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks' as const,
  };
  if (mode === 'test') return { root, test };
  if (mode === 'lib') {
    return {
      publicDir: false,
      build: {
        outDir: resolve(root, 'dist/lib'),
        emptyOutDir: true,
        target: 'es2022',
        sourcemap: true,
        lib: { entry: resolve(root, 'src/index.ts'), formats: ['es'], fileName: () => 'webgguf.js' },
        rollupOptions: { external: [/^node:/, 'webgpu'] },
      },
      worker: { format: 'es' as const },
    };
  }
  if (mode === 'iife') {
    return {
      publicDir: false,
      build: {
        outDir: resolve(root, 'dist/iife'),
        emptyOutDir: true,
        target: 'es2022',
        sourcemap: true,
        lib: { entry: resolve(root, 'src/index.ts'), formats: ['iife'], name: 'WebGGUF', fileName: () => 'webgguf.js' },
        rollupOptions: { external: [/^node:/, 'webgpu'], output: { inlineDynamicImports: true } },
      },
      worker: { format: 'es' as const },
    };
  }
  if (mode === 'cli') {
    return {
      publicDir: false,
      build: {
        outDir: resolve(root, 'dist/cli'),
        emptyOutDir: true,
        target: 'node20',
        ssr: resolve(root, 'src/cli/main.ts'),
        rollupOptions: { output: { entryFileNames: 'cli.js' } },
      },
      ssr: { noExternal: true, external: ['webgpu'] },
    };
  }
  return {
    root: resolve(root, 'demo'),
    base: './',
    publicDir: resolve(root, 'public'),
    server: { host: '127.0.0.1', port: 5173, headers: isolationHeaders, fs: { allow: [root] } },
    preview: { host: '127.0.0.1', port: 4173, headers: isolationHeaders },
    build: { outDir: resolve(root, 'dist/demo'), emptyOutDir: true, target: 'es2022', sourcemap: true },
    worker: { format: 'es' as const },
    plugins: [precacheList()],
  };
});
