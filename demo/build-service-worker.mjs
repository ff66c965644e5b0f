// Build step of the demo's service worker (run by vite.config.ts once dist/demo is complete, public files included;
// tests run it on a modified copy of a build to make "the next deploy"). Writes:
//   precache.json  every file of the build with the sha256 of its content: [{ "url": "./assets/x.js", "hash": "…" }]
//   sw.js          demo/sw.js with that list inlined and its version = a hash over every file's name AND content, so
//                  any change (a chunk, the icon, the manifest) makes a new worker with a new cache.
// Source maps are left out (not needed offline).
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TEMPLATE = fileURLToPath(new URL('./sw.js', import.meta.url));
const GENERATED = new Set(['sw.js', 'precache.json']);

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/**
 * Writes precache.json and sw.js into the built demo folder `outDir`; returns the version (12 hex digits).
 * @param {string} outDir
 * @returns {string}
 */
export function generateServiceWorker(outDir) {
  const files = walk(outDir)
    .map((path) => relative(outDir, path).split(sep).join('/'))
    .filter((f) => !f.endsWith('.map') && !GENERATED.has(f))
    .sort();
  const entries = files.map((f) => ({
    url: `./${f}`,
    hash: createHash('sha256')
      .update(readFileSync(join(outDir, f)))
      .digest('hex')
      .slice(0, 16),
  }));
  const version = createHash('sha256')
    .update(entries.map((e) => `${e.url} ${e.hash}`).join('\n'))
    .update(readFileSync(TEMPLATE))
    .digest('hex')
    .slice(0, 12);
  writeFileSync(join(outDir, 'precache.json'), JSON.stringify(entries));
  const template = readFileSync(TEMPLATE, 'utf8');
  // The file list goes where the template has `[/*__PRECACHE__*/]` (whatever white space a formatter put inside).
  const placeholder = /\[\s*\/\*__PRECACHE__\*\/\s*\]/;
  if (!placeholder.test(template) || !template.includes('__BUILD_ID__')) {
    throw new Error(
      `${TEMPLATE}: the __BUILD_ID__ or [/*__PRECACHE__*/] placeholder is missing; the service worker would cache nothing`,
    );
  }
  const sw = template
    .replaceAll('__BUILD_ID__', version)
    .replace(placeholder, JSON.stringify(entries.map((e) => e.url)));
  writeFileSync(join(outDir, 'sw.js'), sw);
  return version;
}
