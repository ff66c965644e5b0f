/**
 * Locates the shared fixture folder `../shared` (a sibling of the repository root) for tests and tools.
 * Fixtures are read in place and never copied into the repo; a missing folder is a clear error, not a silent skip.
 */

import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root (this file lives at test/helpers/). */
const REPO_ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

/** Where the vitest global setup regenerates the recorded fixtures of test/fixtures/models (test/setup/). */
export const RECORDED_FIXTURE_DIR: string = join(REPO_ROOT, '.cache', 'recorded-fixtures');

/** Absolute path of the shared fixture folder (`<repo>/../shared`). */
export const SHARED_DIR: string = resolve(REPO_ROOT, '..', 'shared');

function requireSharedDir(): void {
  if (!existsSync(SHARED_DIR) || !statSync(SHARED_DIR).isDirectory()) {
    throw new Error(
      `shared fixtures folder not found at ${SHARED_DIR}: tests expect ../shared next to the repository root ` +
        `(models/, tokenizer-vectors/, docs/); check out or mount it there`,
    );
  }
}

/** Absolute path of `parts` inside the shared folder, e.g. `sharedPath('models', 'stories260K.gguf')`. */
export function sharedPath(...parts: string[]): string {
  requireSharedDir();
  return join(SHARED_DIR, ...parts);
}

/** A recorded fixture's model (`<id>.gguf` of `RECORDED_FIXTURE_DIR`) as a path relative to `../shared/models`. */
export function recordedModelPath(id: string): string {
  return relative(sharedPath('models'), join(RECORDED_FIXTURE_DIR, `${id}.gguf`));
}

/**
 * Every `*.gguf` file under the shared folder (or under `subdir` of it), recursively, as sorted absolute paths.
 * Throws when the shared folder (or the given subdir) is missing.
 */
export function listGgufFiles(subdir?: string): string[] {
  requireSharedDir();
  const root = subdir === undefined ? SHARED_DIR : join(SHARED_DIR, subdir);
  if (!existsSync(root)) throw new Error(`shared fixtures subfolder not found: ${root}`);
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && entry.name.toLowerCase().endsWith('.gguf')) out.push(full);
    }
  };
  walk(root);
  return out.sort();
}
