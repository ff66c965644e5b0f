/**
 * A shared GGUF fixture parsed into what the project's GGUF writer takes (metadata, their types, tensors), so a test
 * can change a field or a tensor and write a variant model at test time.
 */

import { readFileSync } from 'node:fs';
import { parseGguf } from '../../src/gguf/parse.js';
import type { GgufValue, GgufValueTypeInfo } from '../../src/gguf/types.js';
import type { GgufWriteTensor } from '../../src/gguf/write.js';
import { MemoryByteSource } from '../../src/io/byte-source.js';
import { sharedPath } from './shared-path.js';

/** A parsed model as the writer takes it; tensor data are views into the file bytes (copy before changing them). */
export interface EditableGguf {
  metadata: Record<string, GgufValue>;
  metadataTypes: Record<string, GgufValueTypeInfo>;
  tensors: GgufWriteTensor[];
  version: 2 | 3;
}

/** Reads and parses `shared/models/<name>` (e.g. `stories260K.gguf`) into an {@link EditableGguf}. */
export async function readEditableGguf(name: string): Promise<EditableGguf> {
  const bytes = new Uint8Array(readFileSync(sharedPath('models', name)));
  const file = await parseGguf(new MemoryByteSource(bytes));
  const tensors = file.tensors.map((t) => ({
    name: t.name,
    type: t.type,
    shape: [...t.shape],
    data: bytes.subarray(file.tensorDataOffset + t.offset, file.tensorDataOffset + t.offset + t.byteLength),
  }));
  return { metadata: { ...file.metadata }, metadataTypes: { ...file.metadataTypes }, tensors, version: file.version };
}
