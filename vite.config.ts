/**
 * Vite config: `npm start` serves the demo chat, `npm run build` emits the library bundles and the static demo,
 * and vitest runs the Node tests (unit, conformance, kernels on Dawn + lavapipe).
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  root: '.',
  server: {
    host: '127.0.0.1',
    headers: { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' },
  },
  test: {
    include: ['test/unit/**/*.test.ts', 'test/kernels/**/*.test.ts', 'test/reference/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    reporters: ['default'],
  },
});
