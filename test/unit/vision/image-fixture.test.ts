/**
 * The fixture tool's image entry point (`npm run fixtures -- --arch A --mmproj <type> --image FILE …`,
 * scripts/image-fixture.ts): what it refuses before any oracle runs. Its output against llama.cpp's libmtmd is checked by
 * hand (dev-only oracle; scripts/make-image-logits.ts, which shares its oracle runner, re-records the committed
 * test/fixtures/vision/logits-*.json byte for byte).
 */

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../../scripts/fixtures.js';

describe('npm run fixtures -- --mmproj', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    vi.restoreAllMocks();
  });
  const run = (...extra: string[]) => {
    const out = mkdtempSync(path.join(tmpdir(), 'image-fixture-test-'));
    dirs.push(out);
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const args = ['--arch', 'gemma3', '--quant', 'f16', '--seed', '2', '--out', out, ...extra];
    return { status: main(args), errors, out };
  };

  it('needs --image', async () => {
    const r = run('--mmproj', 'gemma3');
    expect(await r.status).toBe(2);
    expect(r.errors.mock.calls.flat().join(' ')).toMatch(/--image/);
  });

  it('names the projector types it generates (every recorded one), writing no mmproj for another', async () => {
    const r = run('--mmproj', 'qwen2.5vl_merger', '--image', 'missing.png');
    expect(await r.status).toBe(2);
    const said = r.errors.mock.calls.flat().join(' ');
    for (const type of ['gemma3', 'idefics3', 'lfm2', 'mlp', 'pixtral', 'gemma4v', 'ldp']) expect(said).toContain(type);
    expect(readdirSync(r.out).filter((f) => f.endsWith('.mmproj.gguf'))).toEqual([]);
  });
});
