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
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { minifyWgsl } from './scripts/wgsl-minify.mjs';
import { generateServiceWorker } from './demo/build-service-worker.mjs';

/**
 * Once dist/demo is complete (public files included), writes precache.json and sw.js from demo/sw.js with the file
 * list inlined and a version hashed over every file's name and content (demo/build-service-worker.mjs).
 */
function serviceWorker(): Plugin {
  return {
    name: 'webgguf-demo-service-worker',
    apply: 'build',
    closeBundle() {
      generateServiceWorker(resolve(root, 'dist/demo'));
    },
  };
}

/**
 * Library builds inline every `new URL(…, import.meta.url)` asset as a data: URL (Vite's lib mode); the WASM kernels
 * are better as sibling files (smaller JS, streaming compile, cacheable), so mark them `?no-inline`.
 */
function wasmAsFiles(): Plugin {
  return {
    name: 'webgguf-wasm-as-files',
    enforce: 'pre',
    transform(code, id) {
      if (!id.endsWith('.ts') || !code.includes('.wasm')) return null;
      const out = code.replace(/(new URL\(\s*['"`][^'"`]+\.wasm)(['"`])/g, '$1?no-inline$2');
      return out === code ? null : { code: out, map: null };
    },
  };
}

/**
 * The IIFE (script-tag) build has no `import.meta`: replace `import.meta.url` by the URL of the script itself,
 * captured while it runs (`document.currentScript`), so the worker and WASM files resolve next to webgguf.js.
 */
/**
 * Script-tag build only: `src/index.ts` gets `createEngine` from `api/create-engine-lazy.ts`, which imports the
 * in-thread engine as a separate ES module on first use, so webgguf.js carries no second copy of the engine.
 */
function lazyInThreadEngine(): Plugin {
  const entry = resolve(root, 'src/index.ts');
  return {
    name: 'webgguf-lazy-in-thread-engine',
    enforce: 'pre',
    resolveId(source, importer) {
      if (importer !== entry || source !== './api/create-engine.js') return null;
      return resolve(root, 'src/api/create-engine-lazy.ts');
    },
  };
}
function scriptUrlShim(): Plugin {
  return {
    name: 'webgguf-script-url-shim',
    enforce: 'post',
    transform(code, id) {
      if (!code.includes('import.meta.url') || id.includes('node_modules')) return null;
      return { code: code.replaceAll('import.meta.url', '__webggufScriptUrl'), map: null };
    },
  };
}
/**
 * Production builds ship the WGSL of `shaders/` (imported with `?raw`) without comments or whitespace that separates
 * nothing (scripts/wgsl-minify.mjs); tests and the dev server read the files as they are, and
 * test/kernels/webgpu-minified-wgsl.gpu.test.ts compiles every composition in its minified form too.
 */
function wgslMinify(): Plugin {
  return {
    name: 'webgguf-wgsl-minify',
    enforce: 'pre',
    load(id) {
      const [file, query] = id.split('?');
      if (!file.endsWith('.wgsl') || query !== 'raw') return null;
      return `export default ${JSON.stringify(minifyWgsl(readFileSync(file, 'utf8')))};`;
    },
  };
}

const SCRIPT_URL_INTRO =
  "var __webggufScriptUrl = (typeof document !== 'undefined' && document.currentScript && document.currentScript.src) || " +
  "(typeof location !== 'undefined' ? location.href : '');";

const root = import.meta.dirname;
const isolationHeaders = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'cross-origin',
};

export default defineConfig(({ mode }) => {
  const test = {
    include: [
      'test/unit/**/*.test.ts',
      'test/cli/**/*.test.ts',
      'test/kernels/**/*.test.ts',
      'test/reference/**/*.test.ts',
    ],
    // Regenerates the recorded random-weight models (test/fixtures/models) before any test lists fixtures.
    globalSetup: ['test/setup/recorded-fixtures.ts'],
    // The IQ grids load on demand in the library; tests that call IQ dequantizers directly get them up front.
    setupFiles: ['test/setup/lazy-chunks.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks' as const,
    // Node 20 ships relaxed SIMD behind a flag; the WASM backend's fastest build needs it (Node ≥ 22 has it on).
    execArgv: ['--experimental-wasm-relaxed-simd'],
  };
  if (mode === 'test') return { root, test };
  if (mode === 'lib') {
    return {
      base: './',
      publicDir: false,
      plugins: [wgslMinify(), wasmAsFiles()],
      build: {
        outDir: resolve(root, 'dist/lib'),
        emptyOutDir: true,
        target: 'es2022',
        sourcemap: true,
        // Two entries: the library and the AI SDK provider (`webgguf/ai-sdk`, which only imports types of @ai-sdk/provider).
        lib: {
          entry: { webgguf: resolve(root, 'src/index.ts'), 'ai-sdk': resolve(root, 'src/ai-sdk/index.ts') },
          formats: ['es'],
          fileName: (_f, name) => `${name}.js`,
        },
        rollupOptions: { external: [/^node:/, 'webgpu'] },
      },
      worker: { format: 'es' as const, plugins: () => [wgslMinify(), wasmAsFiles()] },
    };
  }
  if (mode === 'iife') {
    return {
      base: './',
      publicDir: false,
      plugins: [lazyInThreadEngine(), wgslMinify(), wasmAsFiles(), scriptUrlShim()],
      experimental: {
        // Assets referenced from the script itself resolve against its own URL (captured at load), not the page's.
        renderBuiltUrl: (file: string, { hostId }: { hostId: string }) =>
          hostId === 'webgguf.js'
            ? { runtime: `new URL(${JSON.stringify(file)}, __webggufScriptUrl).href` }
            : undefined,
      },
      build: {
        outDir: resolve(root, 'dist/iife'),
        emptyOutDir: true,
        target: 'es2022',
        sourcemap: true,
        lib: { entry: resolve(root, 'src/index.ts'), formats: ['iife'], name: 'WebGGUF', fileName: () => 'webgguf.js' },
        rollupOptions: { external: [/^node:/, 'webgpu'], output: { intro: SCRIPT_URL_INTRO } },
      },
      worker: { format: 'es' as const, plugins: () => [wgslMinify(), wasmAsFiles()] },
    };
  }
  if (mode === 'cli') {
    return {
      publicDir: false,
      plugins: [wgslMinify()],
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
    worker: { format: 'es' as const, plugins: () => [wgslMinify()] },
    plugins: [wgslMinify(), serviceWorker()],
  };
});
