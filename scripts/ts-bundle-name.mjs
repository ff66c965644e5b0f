// The file name under dist/scripts/ of a bundled TypeScript entry (shared by bundle-scripts.mjs and run-ts.mjs):
// 'test/bench/bench.ts' → 'test__bench__bench.mjs'.
import { isAbsolute, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));

/** Bundle file name for `entry` (a path relative to the repository root, or absolute). */
export function bundleName(entry) {
  const rel = isAbsolute(entry) ? relative(root, entry) : entry;
  return rel.replace(/\\/g, '/').replace(/^\.\//, '').replace(/\//g, '__').replace(/\.ts$/, '.mjs');
}
