/**
 * GGUF module: the incremental parser (`parseGguf`), the writer (`writeGguf`, `writeGgufChunks`), the one typed
 * metadata reader (`MetadataReader`, taking the error code of its caller) and the format tables. Everything here reads through a `ByteSource` and never
 * fetches on its own.
 */

export * from './types.js';
export { parseGguf } from './parse.js';
export { writeGguf, writeGgufChunks, type GgufWriteInput } from './write.js';
export { inferValueType, valueTypeName, ggufType } from './value-types.js';
export { MetadataReader } from './metadata-reader.js';
