/**
 * GGUF module: the incremental parser (`parseGguf`), the writer (`writeGguf`, `writeGgufChunks`), typed metadata
 * accessors (`getString`, `archKey` …) and the format tables. Everything here reads through a `ByteSource` and never
 * fetches on its own.
 */

export * from './types.js';
export { parseGguf } from './parse.js';
export { writeGguf, writeGgufChunks, type GgufWriteInput } from './write.js';
export { inferValueType, valueTypeName, ggufType } from './value-types.js';
export * from './metadata.js';
