/**
 * The built CLI (dist/cli, as shipped) on the WebGPU backend in a child process: `conform` on stories260K passes on
 * the f16 and the f32 path. A separate process matters: Dawn aborts a process whose GPU instance the garbage collector
 * reclaims while a device is alive, which an in-process test (holding its own GPU) would never show.
 */

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { nodeGpu } from '../../src/backend/select-backend.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BUILT_CLI = path.join(ROOT, 'dist/cli/cli.js');
const MODEL = path.resolve(ROOT, '../shared/models/stories260K.gguf');

function runBuiltCli(args: string[]): { code: number | null; out: string; err: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'scripts/webgguf.mjs'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
    env: { ...process.env, WEBGGUF_FROM_SOURCE: '' },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe('webgguf CLI on WebGPU (built bundle, child process)', () => {
  it('nodeGpu() hands out one Dawn instance per process', async () => {
    const a = await nodeGpu();
    expect(typeof a?.requestAdapter).toBe('function');
    expect(await nodeGpu()).toBe(a);
  });

  it.skipIf(!existsSync(BUILT_CLI))(
    'conform passes on the f16 path and on the f32 path (--f32)',
    () => {
      for (const extra of [[], ['--f32']]) {
        const r = runBuiltCli(['conform', MODEL, '--backend', 'webgpu', ...extra]);
        expect(r.err, r.err).not.toMatch(/terminate called|futex|Segmentation/);
        expect(r.out, r.err).toMatch(/^backend: webgpu /m);
        expect(r.out).toMatch(extra.length ? /^backend: webgpu f32 /m : /^backend: webgpu (f16|f32) /m);
        expect(r.out.trimEnd().split('\n').pop()).toBe('3 passed, 0 failed');
        expect(r.code).toBe(0);
      }
    },
    240_000,
  );
});
