/**
 * The hostile-model suite, in-thread: each model generated from stories260K with one field changed (see
 * test/helpers/hostile-models.ts) must make `createEngine` reject with a clean `LlmError` of the expected code whose
 * message names the real cause, within a time bound (no hang, no out-of-memory crash). The worker half is
 * test/e2e/hostile-models.spec.ts.
 */

import { describe, expect, it } from 'vitest';
import { createEngine } from '../../../src/api/create-engine.js';
import { HOSTILE_CASES, hostileModelBytes } from '../../helpers/hostile-models.js';
import { llmError } from '../../helpers/llm-error.js';

/** A case slower than this is a hang (the model is 1 MB; loading it takes well under a second). */
const CASE_BOUND_MS = 20_000;

describe('hostile models (in-thread createEngine)', () => {
  it.each(HOSTILE_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const bytes = await hostileModelBytes(c);
    const t0 = performance.now();
    const err = await llmError(createEngine({ model: new Blob([bytes as Uint8Array<ArrayBuffer>]), backend: 'cpu', contextLength: 64, slots: 1 }));
    expect(performance.now() - t0).toBeLessThan(CASE_BOUND_MS);
    expect({ code: err.code, message: err.message }).toMatchObject({ code: c.code, message: expect.stringMatching(c.message) });
    if (c.notMessage) expect(err.message).not.toMatch(c.notMessage);
  }, CASE_BOUND_MS + 10_000);
});
