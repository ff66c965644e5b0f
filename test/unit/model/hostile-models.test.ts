/**
 * The hostile-model suite, in-thread: each model generated from stories260K with one field changed (see
 * test/helpers/hostile-models.ts) must make `createEngine` reject with a clean `LlmError` of the expected code whose
 * message names the real cause, within a time bound (no hang, no out-of-memory crash). The worker half is
 * test/e2e/hostile-models.spec.ts.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { parseGguf } from '../../../src/gguf/parse.js';
import { GgmlType } from '../../../src/gguf/types.js';
import { MemoryByteSource } from '../../../src/io/byte-source.js';
import { HOSTILE_CASES, hostileModelBytes } from '../../helpers/hostile-models.js';
import { llmError } from '../../helpers/llm-error.js';
import { sharedPath } from '../../helpers/shared-path.js';

/** A case slower than this is a hang (the model is 1 MB; loading it takes well under a second). */
const CASE_BOUND_MS = 20_000;

describe('hostile models (in-thread createEngine)', () => {
  it.each(HOSTILE_CASES.map((c) => [c.name, c] as const))(
    '%s',
    async (_name, c) => {
      const bytes = await hostileModelBytes(c);
      const t0 = performance.now();
      const err = await llmError(
        createEngine({
          model: new Blob([bytes as Uint8Array<ArrayBuffer>]),
          backend: 'cpu',
          contextLength: 64,
          slots: 1,
        }),
      );
      expect(performance.now() - t0).toBeLessThan(CASE_BOUND_MS);
      expect({ code: err.code, message: err.message }).toMatchObject({
        code: c.code,
        message: expect.stringMatching(c.message),
      });
      if (c.notMessage) expect(err.message).not.toMatch(c.notMessage);
    },
    CASE_BOUND_MS + 10_000,
  );
});

describe('hostile quantized model (in-thread createEngine)', () => {
  it('a NaN block scale in a Q4_0 matrix is gguf-invalid at load, naming the tensor', async () => {
    const bytes = new Uint8Array(readFileSync(sharedPath('models', 'derived', 'stories260K-q4_0.gguf')));
    const file = await parseGguf(new MemoryByteSource(bytes));
    const t = file.tensors.find((x) => x.type === GgmlType.Q4_0)!;
    bytes[file.tensorDataOffset + t.offset + 18 + 1] = 0x7e; // block 1's f16 scale d → NaN
    const err = await llmError(createEngine({ model: new Blob([bytes]), backend: 'cpu', contextLength: 64, slots: 1 }));
    expect(err.code).toBe('gguf-invalid');
    expect(err.message).toContain(`'${t.name}' holds a non-finite value`);
  }, 30_000);
});
