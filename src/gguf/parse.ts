/**
 * `parseGguf`: reads a GGUF v2/v3 header (magic, version, metadata, tensor infos) from a `ByteSource` incrementally —
 * the first chunk, then geometrically larger prefixes only while the header needs them — and validates the tensor
 * table against the file. Spec: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md (reader: ggml/src/gguf.cpp).
 *
 * Cost is linear in the header: the readers are generators that yield the offset they need and resume where they
 * stopped once it is loaded (nothing is re-parsed), a fixed-size array waits once for its `count × size` bytes and is
 * copied into a typed array, and long values yield so the abort signal is honoured while they are decoded.
 */

import { LlmError, throwIfAborted } from '../errors.js';
import type { ByteSource } from '../io/byte-source.js';
import { ByteCursor, NeedMoreBytes } from './byte-cursor.js';
import {
  type GgufLimits,
  MAX_TENSOR_ELEMENTS,
  MIN_BYTES,
  checkCount,
  invalid,
  resolveLimits,
  shorten,
} from './limits.js';
import { valueTypeName } from './value-types.js';
import { type ReadStep, SCALAR_BYTES, TICK, ensure, readString, readValue } from './read-value.js';
import {
  GGML_TYPES,
  GgufValueType,
  isGgufArray,
  type GgufFile,
  type GgufTensorInfo,
  type GgufValue,
  type GgufValueTypeInfo,
} from './types.js';

/** Options of `parseGguf`. */
export interface ParseGgufOptions {
  /** Aborts between chunk reads and inside long values with `LlmError('aborted')`. */
  readonly signal?: AbortSignal;
  /** Overrides of the parser's bounds (see `GgufLimits`). */
  readonly limits?: Partial<GgufLimits>;
}

/** `GGUF` read as four bytes. */
const MAGIC = [0x47, 0x47, 0x55, 0x46];
/** Alignment used when `general.alignment` is absent (`GGUF_DEFAULT_ALIGNMENT`). */
export const GGUF_DEFAULT_ALIGNMENT = 32;
/** Key of the alignment in metadata. */
export const ALIGNMENT_KEY = 'general.alignment';

/** Where in the header the parser stands: each completed item is committed here (a restart resumes from `pos`). */
interface ParseState {
  /** Absolute offset of the first item not yet committed. */
  pos: number;
  version: 2 | 3 | 0;
  nTensors: number;
  nKv: number;
  kvDone: number;
  metadata: Record<string, GgufValue>;
  metadataTypes: Record<string, GgufValueTypeInfo>;
  tensors: GgufTensorInfo[];
  tensorNames: Set<string>;
  /** Absolute offset of each tensor info's `offset` field, for error messages. */
  offsetFieldAt: number[];
  /** Absolute offset of the `general.alignment` value, when present. */
  alignmentAt: number;
}

/**
 * Parses the header of a GGUF v2 or v3 file: metadata (with stored types) and the tensor table. Reads only the header
 * region from `source`, never the tensor data. Every malformed or hostile input rejects with `LlmError('gguf-invalid')`
 * naming the field and byte offset; an aborted `signal` rejects with `LlmError('aborted')`.
 *
 * @example
 * const file = await parseGguf(new MemoryByteSource(bytes));
 * file.metadata['general.architecture']; // 'llama'
 */
export async function parseGguf(source: ByteSource, options: ParseGgufOptions = {}): Promise<GgufFile> {
  const limits = resolveLimits(options.limits);
  const { signal } = options;
  const fileSize = source.size;
  if (!Number.isSafeInteger(fileSize) || fileSize < 0) {
    throw new LlmError('gguf-invalid', `GGUF source ${source.name} reports an invalid size ${String(fileSize)}`, {
      details: { field: 'size', offset: 0 },
    });
  }
  const state: ParseState = {
    pos: 0,
    version: 0,
    nTensors: -1,
    nKv: -1,
    kvDone: 0,
    metadata: Object.create(null) as Record<string, GgufValue>,
    metadataTypes: Object.create(null) as Record<string, GgufValueTypeInfo>,
    tensors: [],
    tensorNames: new Set(),
    offsetFieldAt: [],
    alignmentAt: -1,
  };
  // bytes: file bytes [0, bytes.length), the loaded prefix of the header region; the cursor reads it.
  let bytes: Uint8Array = new Uint8Array(0);
  const cursor = new ByteCursor(bytes, fileSize);
  const what = `GGUF parse of ${source.name}`;
  /** Loads at least up to `end` (growing geometrically, never past the file or maxHeaderBytes). */
  const load = async (end: number): Promise<void> => {
    if (end > limits.maxHeaderBytes) {
      throw invalid(
        'header region',
        state.pos,
        `needs more than maxHeaderBytes = ${limits.maxHeaderBytes} bytes of header; the file is corrupt or hostile`,
        {
          needed: end,
          limit: limits.maxHeaderBytes,
        },
      );
    }
    const want = Math.min(fileSize, limits.maxHeaderBytes, Math.max(end, bytes.length * 2));
    if (want <= bytes.length) return;
    const more = await source.read(bytes.length, want - bytes.length, signal);
    throwIfAborted(signal, what);
    if (more.byteLength !== want - bytes.length) {
      throw new LlmError(
        'gguf-invalid',
        `GGUF parse: ${source.name} returned ${more.byteLength} bytes at offset ${bytes.length}, asked for ${want - bytes.length}`,
        {
          details: { field: 'read', offset: bytes.length },
        },
      );
    }
    if (bytes.length === 0) {
      bytes = more; // first chunk: used as is (never written to)
    } else {
      const grown = new Uint8Array(want);
      grown.set(bytes, 0);
      grown.set(more, bytes.length);
      bytes = grown;
    }
    cursor.extend(bytes);
  };
  throwIfAborted(signal, what);
  await load(Math.min(fileSize, limits.initialChunkBytes));
  let steps = parseHeader(cursor, state, limits);
  let lastBreak = nowMs();
  for (;;) {
    let step: IteratorResult<number, void>;
    try {
      step = steps.next();
    } catch (e) {
      if (!(e instanceof NeedMoreBytes)) throw e;
      // Safety net for a read that did not wait for its bytes: load them and resume at the last committed item.
      await load(e.end);
      steps = parseHeader(cursor, state, limits);
      continue;
    }
    if (step.done) return finish(state, cursor.pos, fileSize, limits);
    if (step.value === TICK) {
      // Inside a long value: honour an abort, and let the event loop run (so the abort can arrive) every ~30 ms.
      throwIfAborted(signal, what);
      if (nowMs() - lastBreak > BREAK_EVERY_MS) {
        await new Promise<void>((resolve) => setTimeout(resolve, 0));
        throwIfAborted(signal, what);
        lastBreak = nowMs();
      }
    } else {
      await load(step.value);
    }
  }
}

/** Longest stretch of synchronous parsing before the event loop gets a turn. */
const BREAK_EVERY_MS = 30;

function nowMs(): number {
  return typeof performance !== 'undefined' ? performance.now() : Date.now();
}

/**
 * Parses from `state.pos` onwards, committing each completed item to `state`. Yields the offsets it needs loaded
 * (and `TICK` in long loops); see `read-value.ts`.
 */
function* parseHeader(c: ByteCursor, s: ParseState, limits: GgufLimits): ReadStep {
  c.pos = s.pos;
  if (s.version === 0) {
    yield* ensure(c, 4, 'magic');
    const magic = c.bytesView(4, 'magic');
    if (!MAGIC.every((b, i) => magic[i] === b)) {
      const hex = Array.from(magic, (b) => b.toString(16).padStart(2, '0')).join(' ');
      throw invalid('magic', 0, `not a GGUF file: first bytes are ${hex}, expected 47 47 55 46 ("GGUF")`);
    }
    yield* ensure(c, 4, 'version');
    const version = c.u32('version');
    if (version !== 2 && version !== 3) {
      const bigEndian = version === 0x02000000 || version === 0x03000000;
      throw invalid(
        'version',
        4,
        bigEndian
          ? 'big-endian GGUF files are not supported; convert the model to little-endian'
          : `unsupported version ${version} (supported: 2 and 3); re-convert the model with a current llama.cpp`,
        { value: version },
      );
    }
    yield* ensure(c, 8, 'tensor count');
    const tensorsAt = c.pos;
    const nTensors = c.u64Bounded('tensor count', limits.maxTensors, 'limit maxTensors');
    yield* ensure(c, 8, 'metadata kv count');
    const kvAt = c.pos;
    const nKv = c.u64Bounded('metadata kv count', limits.maxMetadataKv, 'limit maxMetadataKv');
    checkCount(
      'metadata kv count',
      kvAt,
      nKv,
      limits.maxMetadataKv,
      'maxMetadataKv',
      MIN_BYTES.metadataKv,
      c.remainingInFile,
    );
    checkCount(
      'tensor count',
      tensorsAt,
      nTensors,
      limits.maxTensors,
      'maxTensors',
      MIN_BYTES.tensorInfo,
      c.remainingInFile,
    );
    if (nKv * MIN_BYTES.metadataKv + nTensors * MIN_BYTES.tensorInfo > c.remainingInFile) {
      throw invalid(
        'tensor count',
        tensorsAt,
        `${nTensors} tensors and ${nKv} metadata pairs cannot fit in the ${c.remainingInFile} bytes left`,
      );
    }
    s.version = version;
    s.nTensors = nTensors;
    s.nKv = nKv;
    s.pos = c.pos;
  }
  while (s.kvDone < s.nKv) {
    if (s.kvDone % 4096 === 4095) yield TICK;
    const at = c.pos;
    const field = `metadata key #${s.kvDone}`;
    const key = yield* readString(c, field, limits);
    if (key in s.metadata) {
      throw invalid(field, at, `duplicate key "${shorten(key)}"; each key may appear once`, { key: shorten(key) });
    }
    const shown = shorten(key);
    yield* ensure(c, 4, `type of metadata "${shown}"`);
    const typeAt = c.pos;
    const type = c.u32(`type of metadata "${shown}"`);
    const { value, type: info } = yield* readValue(c, type, typeAt, `metadata "${shown}"`, 0, limits);
    s.metadata[key] = value;
    s.metadataTypes[key] = info;
    if (key === ALIGNMENT_KEY) s.alignmentAt = typeAt + 4;
    s.kvDone++;
    s.pos = c.pos;
  }
  while (s.tensors.length < s.nTensors) {
    if (s.tensors.length % 4096 === 4095) yield TICK;
    yield* readTensorInfo(c, s, limits);
    s.pos = c.pos;
  }
}

/** Reads one tensor info: name, n_dims, dims (ne order), ggml type, data offset. */
function* readTensorInfo(c: ByteCursor, s: ParseState, limits: GgufLimits): ReadStep {
  const index = s.tensors.length;
  const nameAt = c.pos;
  const name = yield* readString(c, `tensor #${index} name`, limits);
  if (s.tensorNames.has(name)) {
    throw invalid(
      `tensor #${index} name`,
      nameAt,
      `duplicate tensor name "${shorten(name)}"; each tensor may appear once`,
      { name: shorten(name) },
    );
  }
  const label = `tensor #${index} ("${shorten(name)}")`;
  yield* ensure(c, 4, `${label} n_dims`);
  const dimsAt = c.pos;
  const nDims = c.u32(`${label} n_dims`);
  if (nDims < 1 || nDims > limits.maxDims) {
    throw invalid(`${label} n_dims`, dimsAt, `n_dims is ${nDims}; it must be 1–${limits.maxDims}`, { value: nDims });
  }
  yield* ensure(c, 8 * nDims + 12, `${label} dims, type and offset`);
  const shape: number[] = [];
  let nElements = 1;
  for (let d = 0; d < nDims; d++) {
    const at = c.pos;
    const raw = c.u64(`${label} dim ${d}`);
    if (raw === 0n || raw > BigInt(MAX_TENSOR_ELEMENTS)) {
      throw invalid(`${label} dim ${d}`, at, `dimension is ${raw}; it must be 1–${MAX_TENSOR_ELEMENTS}`, {
        value: raw.toString(),
      });
    }
    const dim = Number(raw);
    if (nElements > MAX_TENSOR_ELEMENTS / dim) {
      throw invalid(
        `${label} dim ${d}`,
        at,
        `element count overflows 2^53 (shape so far ${[...shape, dim].join('×')})`,
      );
    }
    nElements *= dim;
    shape.push(dim);
  }
  const typeAt = c.pos;
  const typeId = c.u32(`${label} type`);
  const offsetAt = c.pos;
  const offset = c.u64Bounded(`${label} offset`, MAX_TENSOR_ELEMENTS, 'offsets must be exact JS numbers');
  const info = GGML_TYPES.get(typeId);
  if (info === undefined) {
    throw invalid(`${label} type`, typeAt, `unknown ggml type id ${typeId}; this build cannot load the tensor`, {
      value: typeId,
    });
  }
  if (shape[0] % info.blockElements !== 0) {
    throw invalid(
      `${label} dim 0`,
      dimsAt + 4,
      `row length ${shape[0]} is not a multiple of the ${info.name} block size ${info.blockElements}`,
      {
        value: shape[0],
      },
    );
  }
  const byteLength = (nElements / info.blockElements) * info.blockBytes;
  if (!Number.isSafeInteger(byteLength)) {
    throw invalid(`${label} type`, typeAt, `byte size of ${nElements} ${info.name} elements overflows 2^53`);
  }
  s.tensorNames.add(name);
  s.offsetFieldAt.push(offsetAt);
  s.tensors.push({ name, type: info.type, shape, offset, byteLength, nElements });
}

/** Resolves alignment and the data offset, then checks every tensor lies aligned, inside the file, without overlap. */
function finish(s: ParseState, headerEnd: number, fileSize: number, limits: GgufLimits): GgufFile {
  const alignment = readAlignment(s, limits);
  const tensorDataOffset = Math.ceil(headerEnd / alignment) * alignment;
  const order = s.tensors.map((_, i) => i).sort((a, b) => s.tensors[a].offset - s.tensors[b].offset);
  let prevEnd = 0;
  let prevName = '';
  for (const i of order) {
    const t = s.tensors[i];
    const field = `tensor #${i} ("${shorten(t.name)}") offset`;
    const at = s.offsetFieldAt[i];
    if (t.offset % alignment !== 0) {
      throw invalid(field, at, `data offset ${t.offset} is not a multiple of the alignment ${alignment}`, {
        value: t.offset,
        alignment,
      });
    }
    const end = tensorDataOffset + t.offset + t.byteLength;
    if (end > fileSize) {
      throw invalid(
        field,
        at,
        `data [${tensorDataOffset + t.offset}, ${end}) lies outside the file (${fileSize} bytes); the file is truncated`,
        {
          value: t.offset,
          fileSize,
        },
      );
    }
    if (t.offset < prevEnd) {
      throw invalid(
        field,
        at,
        `data at relative offset ${t.offset} overlaps tensor "${shorten(prevName)}" (ends at ${prevEnd})`,
        { value: t.offset },
      );
    }
    prevEnd = t.offset + t.byteLength;
    prevName = t.name;
  }
  return {
    version: s.version as 2 | 3,
    metadata: s.metadata,
    metadataTypes: s.metadataTypes,
    tensors: s.tensors,
    alignment,
    tensorDataOffset,
    fileSize,
  };
}

/** `general.alignment`: an integer scalar, a power of two in 1..maxAlignment; 32 when absent. */
function readAlignment(s: ParseState, limits: GgufLimits): number {
  if (!(ALIGNMENT_KEY in s.metadata)) return GGUF_DEFAULT_ALIGNMENT;
  const raw = s.metadata[ALIGNMENT_KEY];
  const type = s.metadataTypes[ALIGNMENT_KEY].type;
  const isInteger =
    type !== GgufValueType.FLOAT32 &&
    type !== GgufValueType.FLOAT64 &&
    SCALAR_BYTES[type] !== undefined &&
    type !== GgufValueType.BOOL;
  const value = typeof raw === 'bigint' ? (raw <= BigInt(limits.maxAlignment) && raw >= 0n ? Number(raw) : -1) : raw;
  if (
    !isInteger ||
    typeof value !== 'number' ||
    value < 1 ||
    value > limits.maxAlignment ||
    (value & (value - 1)) !== 0
  ) {
    const shown = isGgufArray(raw) ? `an array of ${raw.length}` : shorten(String(raw));
    throw new LlmError(
      'gguf-invalid',
      `GGUF metadata "${ALIGNMENT_KEY}" at byte offset ${s.alignmentAt} is ${shown} (type ${valueTypeName(s.metadataTypes[ALIGNMENT_KEY])}); ` +
        `it must be an integer power of two from 1 to ${limits.maxAlignment}`,
      { details: { field: ALIGNMENT_KEY, offset: s.alignmentAt, value: shown } },
    );
  }
  return value;
}
