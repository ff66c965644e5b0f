/**
 * The host ↔ WGSL interface of the WebGPU kernels, checked without a GPU (issue 13): every kernel file discovered
 * under shaders/kernels/ has a binding table and its entry points exist; every binding the table declares matches
 * the WGSL declaration's number and access (uniform / read / read_write); every uniform block fits the params slot;
 * kernels that read quantized weights have the `k` field the row-split quant snippets read; and gemv_sg's Params
 * and gemv's (the hardware GEMVs, one Params layout) fields are in the order and of the types the host writes them (a reordered field fails here).
 */

import { describe, expect, it } from 'vitest';
import { kernelInterfaceSource, kernelNames, kernelSource } from '../../src/backend/webgpu/compose.js';
import { GEMV_SG_F32_PARAMS, GEMV_SG_PARAMS } from '../../src/backend/webgpu/gemv-sg-params.js';
import { ENTRY_BINDINGS } from '../../src/backend/webgpu/pipelines.js';
import { PARAMS_BYTES } from '../../src/backend/webgpu/step-recorder.js';

type Access = 'uniform' | 'read' | 'rw';

/** `@group(0) @binding(n) var<…> name` declarations of a WGSL source: binding → access. */
function declaredBindings(src: string): Map<number, Access> {
  const out = new Map<number, Access>();
  for (const m of src.matchAll(/@group\(0\)\s*@binding\((\d+)\)\s*var<([^>]+)>/g)) {
    const space = m[2]!.replace(/\s/g, '');
    out.set(Number(m[1]), space === 'uniform' ? 'uniform' : space.endsWith('read_write') ? 'rw' : 'read');
  }
  return out;
}

/** Fields (name, type) of `struct Params` in a WGSL source. */
function paramsFields(src: string): { name: string; type: string }[] {
  const body = /struct Params\s*\{([^}]*)\}/.exec(src)?.[1] ?? '';
  return [...body.matchAll(/^\s*(\w+)\s*:\s*(\w+)/gm)].map((m) => ({ name: m[1]!, type: m[2]! }));
}

describe('WebGPU shader interface', () => {
  const kernels = kernelNames().sort();

  it('discovers the kernels by glob', () => {
    expect(kernels.length).toBeGreaterThanOrEqual(20);
    expect(kernels).toContain('gemv_sg');
  });

  it('every kernel file has a binding table for its main entry point', () => {
    const missing = kernels.filter((k) => !(`${k}.main` in ENTRY_BINDINGS));
    expect(missing).toEqual([]);
  });

  for (const [key, table] of Object.entries(ENTRY_BINDINGS)) {
    it(`${key}: bindings match the WGSL declarations`, () => {
      const [kernel, entry] = key.split('.') as [string, string];
      expect(kernelSource(kernel), `shaders/kernels/${kernel}.wgsl`).toBeDefined();
      const src = kernelInterfaceSource(kernel);
      expect(src).toMatch(new RegExp(`fn ${entry}\\s*\\(`));
      const declared = declaredBindings(src);
      table.forEach((kind, binding) => {
        if (kind !== null) expect(declared.get(binding), `${key} binding ${binding}`).toBe(kind);
      });
      // A file's declarations serve all its entry points; a second entry point (short_conv.update) may use fewer,
      // so only the main entry point's table must cover every declared binding.
      if (entry === 'main') {
        for (const b of declared.keys())
          expect(b, `${key}: binding ${b} is declared but not in the table`).toBeLessThan(table.length);
      }
    });
  }

  for (const kernel of kernels) {
    it(`${kernel}: Params fit the ${PARAMS_BYTES}-byte uniform slot; weight kernels have the k field`, () => {
      const src = kernelInterfaceSource(kernel);
      const fields = paramsFields(src);
      expect(fields.length * 4).toBeLessThanOrEqual(PARAMS_BYTES);
      expect(
        fields.every((f) => f.type === 'u32' || f.type === 'f32' || f.type === 'i32'),
        JSON.stringify(fields),
      ).toBe(true);
      if (/var<storage, read> weights\b/.test(src)) expect(fields.map((f) => f.name)).toContain('k');
    });
  }

  it.each(['gemv_sg', 'gemv'])('%s: the host writes Params in the declared order and types', (kernel) => {
    const fields = paramsFields(kernelInterfaceSource(kernel));
    expect(fields.map((f) => f.name)).toEqual([...GEMV_SG_PARAMS]);
    for (const f of fields) expect(f.type, f.name).toBe(GEMV_SG_F32_PARAMS.has(f.name) ? 'f32' : 'u32');
  });
});
