/**
 * Setup shared by the browser specs and the browser bench: the script-tag bundle's folder (checked to be built),
 * a page's ES bundle built from one entry file with Vite, and stories260K's llama.cpp reference output.
 */

import { existsSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'vite';
import { sharedPath } from '../../helpers/shared-path.js';

/** Repository root (this file lives at test/e2e/support/). */
export const REPO_ROOT: string = resolve(fileURLToPath(new URL('../../../', import.meta.url)));

/** The script-tag bundle's folder (dist/iife). @throws Error when `npm run build` has not made webgguf.js there. */
export function requireIifeDir(): string {
  const dir = resolve(REPO_ROOT, 'dist/iife');
  if (!existsSync(resolve(dir, 'webgguf.js')))
    throw new Error(`${dir}/webgguf.js is missing: run \`npm run build\` first`);
  return dir;
}

/**
 * Builds a test page's ES bundle from `entry` (absolute, or relative to the repository root) into `outDir` (emptied
 * first) as `<entry name>.js`, unminified, Node built-ins left external.
 */
export async function buildPageBundle(entry: string, outDir: string): Promise<void> {
  await build({
    configFile: false,
    root: REPO_ROOT,
    logLevel: 'warn',
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      minify: false,
      lib: {
        entry: resolve(REPO_ROOT, entry),
        formats: ['es'],
        fileName: () => `${basename(entry).replace(/\.ts$/, '')}.js`,
      },
      rollupOptions: { external: [/^node:/] },
    },
  });
}

/** stories260K's reference from llama.cpp: the prompt and its greedy continuation (f32 KV cache). */
export interface Stories260kReference {
  readonly prompt: string;
  readonly greedy_kv_f32: { readonly n: number; readonly text: string };
}

/** Reads shared/models/stories260K.reference.json. */
export function readStories260kReference(): Stories260kReference {
  return JSON.parse(readFileSync(sharedPath('models', 'stories260K.reference.json'), 'utf8')) as Stories260kReference;
}
