/**
 * Asserting on failures: the error a promise rejects with, or a function throws, as an `LlmError`, so a test can then
 * check its `code`, `details` and message. Each fails the test when there is no error or it is not an `LlmError`.
 */

import { expect } from 'vitest';
import { type ErrorCode, LlmError } from '../../src/errors.js';

/** Rejection of `p` as an LlmError (fails the test if `p` resolves or rejects with anything else). */
export async function llmError(p: Promise<unknown>): Promise<LlmError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e, 'expected a rejection with an LlmError').toBeInstanceOf(LlmError);
  return e as LlmError;
}

/** What `fn()` throws, as an LlmError (fails the test if it returns or throws anything else). */
export function thrownLlmError(fn: () => unknown): LlmError {
  let caught: unknown = null;
  try {
    fn();
  } catch (e) {
    caught = e;
  }
  expect(caught, 'expected an LlmError to be thrown').toBeInstanceOf(LlmError);
  return caught as LlmError;
}

/** Asserts that `p` rejects with `LlmError(code)` whose message matches `message` (when given); returns the error. */
export async function expectLlmError(p: Promise<unknown>, code: ErrorCode, message?: RegExp): Promise<LlmError> {
  const e = await llmError(p);
  expect(e.code).toBe(code);
  if (message) expect(e.message).toMatch(message);
  return e;
}
