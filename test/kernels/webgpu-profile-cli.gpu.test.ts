/**
 * `webgguf profile` and the `--kernels` flag of the model commands (issue 23), in-process on Dawn + lavapipe:
 * the JSON shape the issue asks for, the hardware kernel set forced on a software adapter, and clear errors for a bad
 * kernel set or `--kernels` on a backend without kernel sets.
 */

import { describe, expect, it } from 'vitest';
import { runCliCaptured } from '../helpers/run-cli.js';
import { sharedPath } from '../helpers/shared-path.js';

const MODEL = sharedPath('models', 'stories260K.gguf');

describe('webgguf profile / --kernels', () => {
  it('profile --kernels hardware --json: decode and prefill counts with per-matmul shapes', async () => {
    const r = await runCliCaptured(
      'profile',
      MODEL,
      '--backend',
      'webgpu',
      '--kernels',
      'hardware',
      '--prefill',
      '8',
      '--json',
    );
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as {
      kernels: string;
      decode: Record<string, unknown> & { matmuls: Record<string, unknown>[] };
      prefill: Record<string, unknown> & { matmuls: Record<string, unknown>[] };
    };
    expect(report.kernels).toBe('hardware');
    for (const step of [report.decode, report.prefill]) {
      for (const key of [
        'layers',
        'dispatches',
        'submissions',
        'readbackBytes',
        'weightBytesLogical',
        'weightBytesLoaded',
        'kvBytes',
        'kvBytesRead',
      ]) {
        expect(typeof step[key], key).toBe('number');
      }
      expect(step.matmuls.length).toBeGreaterThan(0);
      for (const m of step.matmuls)
        for (const key of ['rows', 'cols', 'workgroups', 'subgroups']) expect(typeof m[key], key).toBe('number');
    }
    expect(report.decode['layers']).toBe(5);
    expect(report.decode['submissions']).toBe(1);
    expect(report.decode['readbackBytes']).toBe(8);
    // The decode step is profiled as greedy decode runs it: pipelined, its token written on the device.
    expect(report.decode['pipelined']).toBe(true);
    expect(report.decode['hostTokenWrites']).toBe(0);
    expect(report.prefill['hostTokenWrites']).toBe(1);
  });

  it('profile --top-k: the decode token sampled by top-k costs one dispatch, as argmax does', async () => {
    const run = async (...extra: string[]) => {
      const r = await runCliCaptured('profile', MODEL, '--kernels', 'hardware', '--prefill', '4', '--json', ...extra);
      expect(r.code, r.err).toBe(0);
      return (JSON.parse(r.out) as { decode: { dispatches: number; kernels: Record<string, number> } }).decode;
    };
    const greedy = await run();
    const top = await run('--top-k', '40');
    expect(Object.keys(top.kernels).filter((k) => k.startsWith('topk_'))).toEqual([
      expect.stringMatching(/^topk_radix\./),
    ]);
    expect(top.dispatches).toBe(greedy.dispatches);
  });

  it('--kernels software is the kernel set lavapipe gets by default', async () => {
    const r = await runCliCaptured('profile', MODEL, '--kernels', 'software', '--prefill', '4', '--json');
    expect(r.code).toBe(0);
    expect((JSON.parse(r.out) as { kernels: string }).kernels).toBe('software');
  });

  it('--kernels hardware-nosubgroups: the hardware set without subgroups (gemv), rows and lanes per workgroup', async () => {
    const r = await runCliCaptured('profile', MODEL, '--kernels', 'hardware-nosubgroups', '--prefill', '4', '--json');
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as {
      kernels: string;
      backend: string;
      decode: { matmuls: { kernel: string; lanes: number; rowsPerWorkgroup: number }[] };
    };
    expect(report.kernels).toBe('hardware');
    expect(report.backend).toMatch(/shared-memory/);
    const gemv = report.decode.matmuls.filter((m) => m.kernel.startsWith('gemv.'));
    expect(gemv.length).toBeGreaterThan(0); // the fused Q|K|V, wo, gate·up·GLU, down of each layer
    expect(report.decode.matmuls.some((m) => m.kernel.startsWith('gemv_sg'))).toBe(false);
    for (const m of gemv) {
      expect(m.lanes).toBe(64);
      expect(m.rowsPerWorkgroup, m.kernel).toBeGreaterThanOrEqual(4); // was 1: a workgroup per row
    }
  });

  it('a bad kernel set, or --kernels off webgpu, is a clear usage error', async () => {
    const bad = await runCliCaptured('eval', MODEL, '--tokens', '1,2', '--backend', 'webgpu', '--kernels', 'gpu');
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/--kernels must be one of auto, hardware, software, hardware-nosubgroups, got 'gpu'/);
    const off = await runCliCaptured('conform', MODEL, '--backend', 'cpu', '--kernels', 'hardware');
    expect(off.code).toBe(1);
    expect(off.err).toMatch(/--kernels applies to --backend webgpu only/);
  });
});
