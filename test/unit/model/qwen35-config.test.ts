/**
 * qwen35's config reader on the recorded fixture's metadata: which layers are DeltaNet layers (full_attention_interval,
 * attention.recurrent_layers), the multi-token-prediction blocks after the trunk left out (nextn_predict_layers), a
 * per-layer head_count_kv with 0 on recurrent layers, and M-RoPE sections that text-only rope cannot honour.
 */

import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseGguf } from '../../../src/gguf/parse.js';
import type { GgufValue } from '../../../src/gguf/types.js';
import { NodeFileSource } from '../../../src/io/node-file-source.js';
import { getArchitecture } from '../../../src/model/arch/index.js';
import { thrownLlmError } from '../../helpers/llm-error.js';
import { RECORDED_FIXTURE_DIR } from '../../helpers/shared-path.js';

describe('qwen35 config', () => {
  let meta: Record<string, GgufValue>;
  beforeAll(async () => {
    const source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, 'qwen35-q8_0-s1.gguf'));
    meta = { ...(await parseGguf(source)).metadata };
    await source.close();
  });
  const config = (edit: Record<string, GgufValue>) => getArchitecture('qwen35').config({ ...meta, ...edit });

  it('every full_attention_interval-th layer is attention, the rest DeltaNet with the ssm geometry', () => {
    const c = config({});
    expect(c.deltaNetLayers).toEqual([true, true, true, false]);
    expect(c.deltaNet).toEqual({ convWidth: 4, headK: 32, nKHeads: 2, headV: 32, nVHeads: 4 });
    expect(c.attnOutputGate).toBe(true);
    expect(config({ 'qwen35.full_attention_interval': 2 }).deltaNetLayers).toEqual([true, false, true, false]);
    const flags = [false, true, false, true];
    expect(config({ 'qwen35.attention.recurrent_layers': flags }).deltaNetLayers).toEqual(flags);
  });

  it('nextn_predict_layers blocks after the trunk are left out, per-layer arrays cut to match', () => {
    const c = config({
      'qwen35.block_count': 5,
      'qwen35.nextn_predict_layers': 1,
      'qwen35.attention.head_count_kv': Uint32Array.of(0, 0, 0, 2, 2),
    });
    expect(c.nLayers).toBe(4);
    expect(c.deltaNetLayers).toEqual([true, true, true, false]);
    expect(c.nKvHeads).toBe(2);
    const e = thrownLlmError(() => config({ 'qwen35.nextn_predict_layers': 4 }));
    expect(e.code).toBe('gguf-invalid');
    expect(e.message).toContain("'qwen35.nextn_predict_layers'");
  });

  it('M-RoPE sections that leave a rotated pair in the extra section are refused', () => {
    const e = thrownLlmError(() => config({ 'qwen35.rope.dimension_sections': Uint32Array.of(4, 4, 4, 4) }));
    expect(e.code).toBe('unsupported-arch');
    expect(e.message).toContain("'qwen35.rope.dimension_sections'");
    expect(() => config({ 'qwen35.rope.dimension_sections': Uint32Array.of(6, 5, 5, 0) })).not.toThrow();
  });
});
