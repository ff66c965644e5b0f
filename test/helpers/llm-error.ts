/**
 * Asserting on failures: the rejection of a promise as an `LlmError`, so a test can then check its `code`, `details`
 * and message. Fails the test when the promise resolves or rejects with anything else.
 */

import { expect } from 'vitest';
import { LlmError } from '../../src/errors.js';

/** Rejection of `p` as an LlmError (fails the test if `p` resolves or rejects with anything else). */
export async function llmError(p: Promise<unknown>): Promise<LlmError> {
  const e = await p.then(() => null, (err: unknown) => err);
  expect(e).toBeInstanceOf(LlmError);
  return e as LlmError;
}
