/**
 * The WGSL that production builds ship is the minified form of shaders/ (scripts/wgsl-minify.mjs drops comments and
 * every space that separates nothing), while the other GPU tests compile the files as they are. Here every kernel,
 * composed as the backend composes it (each weight type's snippet for the kernels that read weights; f32 and, where
 * the adapter has them, f16 and subgroup variants), is compiled by Dawn both ways: whatever compiles as written must
 * compile minified, with no error and the same entry points.
 */

import { afterAll, describe, expect, it } from 'vitest';
import {
  composeShader,
  type ElementType,
  kernelNames,
  loadFeatureShaders,
  shaderSource,
} from '../../src/backend/webgpu/compose.js';
import { minifyWgsl } from '../../scripts/wgsl-minify.mjs';
import { destroyTestGpu, getTestDevice } from '../helpers/gpu.js';
import { readdirSync } from 'node:fs';
import path from 'node:path';

const QUANTS = readdirSync(path.resolve(import.meta.dirname, '../../shaders/quant'))
  .filter((f) => f.endsWith('.wgsl'))
  .map((f) => f.slice(0, -'.wgsl'.length));

/** Errors Dawn reports for `code`. */
async function compileErrors(device: GPUDevice, code: string): Promise<string[]> {
  device.pushErrorScope('validation'); // the invalid pairings would be logged as uncaptured errors
  const info = await device.createShaderModule({ code }).getCompilationInfo();
  await device.popErrorScope();
  return info.messages.filter((m) => m.type === 'error').map((m) => m.message);
}

/** Entry point names declared in a WGSL source. */
function entryPoints(code: string): string[] {
  return [...code.matchAll(/@(?:compute|vertex|fragment)[^{]*?fn\s+(\w+)/g)].map((m) => m[1]!).sort();
}

describe('minified WGSL compiles like the source', () => {
  afterAll(destroyTestGpu);

  it('every kernel and weight-type composition', async () => {
    await loadFeatureShaders();
    const device = await getTestDevice(['shader-f16', 'subgroups']);
    const paths: { dtype: ElementType; subgroups: boolean }[] = [{ dtype: 'f32', subgroups: false }];
    if (device.features.has('shader-f16')) paths.push({ dtype: 'f16', subgroups: false });
    if (device.features.has('subgroups')) paths.push({ dtype: 'f32', subgroups: true });
    let compiled = 0;
    for (const kernel of kernelNames().sort()) {
      // A kernel that compiles without a weight snippet reads none; the others are composed with each one.
      const plain = composeShader({ kernel, dtype: 'f32', subgroups: false });
      const quants = (await compileErrors(device, plain)).length === 0 ? [undefined] : QUANTS;
      for (const quant of quants) {
        const quantWgsl = quant === undefined ? undefined : shaderSource(`quant/${quant}`);
        for (const p of quant === undefined || quant === 'q4_0' ? paths : paths.slice(0, 1)) {
          const source = composeShader({ kernel, quantWgsl, ...p });
          if ((await compileErrors(device, source)).length > 0) continue; // not a pairing the backend builds
          const minified = minifyWgsl(source);
          const label = `${kernel} ${quant ?? ''} ${p.dtype}${p.subgroups ? '+subgroups' : ''}`;
          expect(await compileErrors(device, minified), label).toEqual([]);
          expect(entryPoints(minified), label).toEqual(entryPoints(source));
          expect(minified.length, label).toBeLessThan(source.length);
          compiled++;
        }
      }
    }
    console.log(`[minified-wgsl] ${compiled} compositions compiled both ways`);
    expect(compiled).toBeGreaterThan(100);
  });
});
