/**
 * `loadChunk`: imports a part of the library that is a separate file in the browser builds (a lazy chunk: the
 * encoders, the rarer tokenizers, the software-adapter kernels …), turning a failed fetch into a clear `LlmError`.
 */

import { LlmError, isLlmError } from '../errors.js';

/**
 * Awaits `importer()` (a dynamic `import()`); an error that is not already an `LlmError` becomes
 * `LlmError('network')` naming `what`, so a page whose server lost a chunk says which part could not load. A failed
 * import is not cached here: the caller may try again.
 */
export async function loadChunk<T>(what: string, importer: () => Promise<T>): Promise<T> {
  try {
    return await importer();
  } catch (e) {
    if (isLlmError(e)) throw e;
    const reason = e instanceof Error ? e.message : String(e);
    throw new LlmError(
      'network',
      `could not load the ${what} code (a separate file of the library, fetched on demand): ${reason}; check that every file of the build is served next to webgguf.js`,
      { cause: e },
    );
  }
}
