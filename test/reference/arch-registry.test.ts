/**
 * What adding an architecture must bring (CONTRIBUTING.md, "Adding an architecture"): every file in src/model/arch/
 * is registered, every registered architecture has a shared fixture with a llama.cpp reference (so the logits
 * conformance suites run it on every backend), and the recipe names only files that exist.
 */

import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseGguf } from '../../src/gguf/parse.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { architectureNames } from '../../src/model/arch/index.js';
import { listEmbeddingOnlyFixtures, listReferenceFixtures } from '../helpers/reference-json.js';

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

describe('architecture recipe', () => {
  it('every file in src/model/arch/ is a registered architecture', () => {
    const files = readdirSync(join(ROOT, 'src/model/arch'))
      .filter((f) => f.endsWith('.ts') && f !== 'index.ts' && f !== 'architecture.ts')
      .map((f) => basename(f, '.ts'));
    expect(files.sort()).toEqual(architectureNames().sort());
  });

  it('every registered architecture has a fixture with a llama.cpp reference (shared or recorded)', async () => {
    const withReference = new Set<string>();
    for (const path of [...listReferenceFixtures().map((f) => f.ggufPath), ...listEmbeddingOnlyFixtures()]) {
      const source = await NodeFileSource.open(path);
      const gguf = await parseGguf(source).finally(() => source.close());
      withReference.add(String(gguf.metadata['general.architecture']));
    }
    const missing = architectureNames().filter((name) => !withReference.has(name));
    expect(
      missing,
      'architectures without a fixture: record one with `npm run fixtures -- --record --arch <name> …` (CONTRIBUTING.md)',
    ).toEqual([]);
  });

  it('CONTRIBUTING.md names only files that exist, the registry among them', () => {
    const text = readFileSync(join(ROOT, 'CONTRIBUTING.md'), 'utf8');
    const paths = [...text.matchAll(/`((?:src|test)\/[\w./-]+\.ts)`/g)]
      .map((m) => m[1])
      .filter((p) => !p.includes('<'));
    expect(paths).toContain('src/model/arch/index.ts');
    for (const p of paths) expect(existsSync(join(ROOT, p)), p).toBe(true);
  });
});
