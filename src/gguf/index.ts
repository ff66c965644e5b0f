/**
 * GGUF module: the incremental parser (`parseGguf`), the writer (`writeGguf`, `writeGgufChunks`), typed metadata
 * accessors (`getString`, `archKey` …) and the format tables. Everything here reads through a `ByteSource` and never
 * fetches on its own.
 */

export * from './types.js';
export { parseGguf, sameType, GGUF_DEFAULT_ALIGNMENT, ALIGNMENT_KEY, type ParseGgufOptions } from './parse.js';
export { DEFAULT_GGUF_LIMITS, MAX_TENSOR_ELEMENTS, type GgufLimits } from './limits.js';
export { writeGguf, writeGgufChunks, type GgufWriteInput, type GgufWriteTensor } from './write.js';
export { inferValueType, checkValue, valueTypeName, ggufType, describeValue } from './value-types.js';
export * from './metadata.js';
