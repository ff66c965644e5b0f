/**
 * The bad-input tests of an architecture edit a recorded fixture's header — metadata keys set or removed, tensors
 * dropped or reshaped — and expect `loadTransformer` (cpu backend) to refuse the edited file with an `LlmError`.
 * `recordedHeader` opens the fixture for a suite (its own beforeAll / afterAll); `loadEdited` loads an edited copy.
 */

import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { createCpuOps } from '../../src/backend/cpu/cpu-ops.js';
import type { LlmError } from '../../src/errors.js';
import { parseGguf } from '../../src/gguf/parse.js';
import type { GgufFile, GgufValue } from '../../src/gguf/types.js';
import { NodeFileSource } from '../../src/io/node-file-source.js';
import { loadAnyModel } from '../../src/model/load-any.js';
import { loadTransformer } from '../../src/model/load.js';
import { llmError } from './llm-error.js';
import { RECORDED_FIXTURE_DIR } from './shared-path.js';

/** A change to a header: keys set (undefined: removed) and a transformation of the file's tensor list. */
export interface HeaderEdit {
  readonly meta?: Record<string, GgufValue | undefined>;
  readonly tensors?: (f: GgufFile) => GgufFile;
}

/** A recorded fixture's parsed header and its bytes, valid inside the suite that opened it. */
export interface RecordedHeader {
  readonly gguf: GgufFile;
  readonly source: NodeFileSource;
}

/** Opens `file` of the recorded fixtures for the enclosing `describe` (closed after it). */
export function recordedHeader(file: string): RecordedHeader {
  const fx = {} as { gguf: GgufFile; source: NodeFileSource };
  beforeAll(async () => {
    fx.source = await NodeFileSource.open(join(RECORDED_FIXTURE_DIR, file));
    fx.gguf = await parseGguf(fx.source);
  });
  afterAll(() => fx.source?.close());
  return fx;
}

/**
 * The error `loadTransformer` (or, with `options.anyModel`, `loadAnyModel`: encoders) gives for the fixture with `edit`
 * applied (fails the test if it loads).
 */
export function loadEdited(
  fx: RecordedHeader,
  edit: HeaderEdit,
  options: { anyModel?: boolean } = {},
): Promise<LlmError> {
  const metadata: Record<string, GgufValue> = { ...fx.gguf.metadata };
  for (const [k, v] of Object.entries(edit.meta ?? {})) {
    if (v === undefined) delete metadata[k];
    else metadata[k] = v;
  }
  const file = (edit.tensors ?? ((f) => f))({ ...fx.gguf, metadata });
  const load = options.anyModel ? loadAnyModel : loadTransformer;
  return llmError(load(file, fx.source, createCpuOps(), { contextLength: 32 }));
}

/** An edit of the tensor list: `name` dropped. */
export const withoutTensor =
  (name: string) =>
  (f: GgufFile): GgufFile => ({ ...f, tensors: f.tensors.filter((t) => t.name !== name) });

/** An edit of the tensor list: `name` given another shape. */
export const reshapedTensor =
  (name: string, shape: number[]) =>
  (f: GgufFile): GgufFile => ({ ...f, tensors: f.tensors.map((t) => (t.name === name ? { ...t, shape } : t)) });
