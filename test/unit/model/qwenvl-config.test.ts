/**
 * qwen2vl / qwen3vl config readers on the recorded fixtures' metadata: the M-RoPE sections reach the layers' rope
 * (consecutive for qwen2vl, interleaved for qwen3vl), qwen3vl's deepstack layer count, and inconsistent sections
 * or deepstack counts are `gguf-invalid` naming the key.
 */

import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufValue } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { getArchitecture } from '../../../src/model/arch/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

async function metadataOf(file: string): Promise<Record<string, GgufValue>> {
  const source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, file));
  try {
    return { ...(await parseGguf(source)).metadata };
  } finally {
    await source.close();
  }
}

describe.each([
  ['qwen2vl', 'qwen2vl-q8_0-s1.gguf', [8, 12, 12, 0], false],
  ['qwen3vl', 'qwen3vl-q8_0-s1.gguf', [12, 10, 10, 0], true],
] as const)('%s config', (arch, file, sections, interleaved) => {
  const config = async (edit: Record<string, GgufValue>) =>
    getArchitecture(arch).config({ ...(await metadataOf(file)), ...edit });
  const key = `${arch}.rope.dimension_sections`;

  it('reads the M-RoPE sections', async () => {
    const c = await config({});
    expect(c.ropeMulti).toEqual({ sections, interleaved });
    expect(c.ropeKind).toBe('neox');
    expect((await config({ [key]: Uint32Array.of(20, 12) })).ropeMulti?.sections).toEqual([20, 12, 0, 0]);
  });

  it.each([
    ['absent', undefined],
    ['a scalar', 16],
    ['five entries', Uint32Array.of(8, 8, 8, 4, 4)],
    ['all of t, h, w zero', Uint32Array.of(0, 0, 0, 8)],
    ['more pairs than the head rotates', Uint32Array.of(40, 40, 40, 0)],
  ])('sections %s are gguf-invalid', async (_, value) => {
    const meta = await metadataOf(file);
    if (value === undefined) delete meta[key];
    else meta[key] = value;
    const e = thrownLlmError(() => getArchitecture(arch).config(meta));
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain(`'${key}'`);
  });

  it('a partial rotary is gguf-invalid (M-RoPE rotates whole heads)', async () => {
    const meta = {
      ...(await metadataOf(file)),
      [`${arch}.rope.dimension_count`]: 32,
      [key]: Uint32Array.of(4, 4, 4, 0),
    };
    const e = thrownLlmError(() => getArchitecture(arch).config(meta));
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain(`'${arch}.rope.dimension_count'`);
  });
});

describe('qwen3vl deepstack', () => {
  it('reads n_deepstack_layers; as many as the layers is gguf-invalid', async () => {
    const meta = await metadataOf('qwen3vl-q8_0-s1.gguf');
    expect(getArchitecture('qwen3vl').config(meta).deepstackLayers).toBe(2);
    const e = thrownLlmError(() => getArchitecture('qwen3vl').config({ ...meta, 'qwen3vl.n_deepstack_layers': 3 }));
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'qwen3vl.n_deepstack_layers'");
  });
});
