/**
 * `WeightLoader`: reads a model's tensors from a `ByteSource` onto a backend. The model code first names what it needs
 * (`upload`, `optional`, `uploadSplit` return slots, shapes checked at once), then `loadAll` reads every tensor once,
 * in file order. On a backend that streams (`Ops.beginWeight`) each tensor is read in pieces of whole rows straight
 * into backend memory (or a staging buffer) while the previous piece is rearranged/uploaded: one pass over the file,
 * no copy of a tensor outside the backend, the read overlapping the backend's work. Otherwise each tensor is read whole
 * and handed to `Ops.uploadWeight`. Either way every byte is scanned for non-finite values before the backend sees it,
 * and progress is reported once per tensor.
 */

import type { Ops, Weight, WeightInfo, WeightStream } from '../backend/ops.js';
import { LlmError, isLlmError, throwIfAborted } from '../errors.js';
import { GgmlType, type GgufFile, type GgufTensorInfo } from '../gguf/types.js';
import { getQuantType } from '../quant/index.js';
import { type ByteSource, readInto } from '../io/byte-source.js';
import { firstNonFinite } from './non-finite-scan.js';

/** Progress of weight upload. */
export interface LoadProgress {
  readonly loadedBytes: number;
  readonly totalBytes: number;
  /** The tensor just uploaded. */
  readonly tensor: string;
}

/** What the loader needs of the load options. */
interface WeightLoaderOptions {
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: LoadProgress) => void;
  readonly pieceBytes?: number;
}

/** A weight named before `loadAll`, filled by it. */
export class WeightSlot {
  private value: Weight | null = null;
  constructor(readonly name: string) {}
  /** The uploaded weight (after `loadAll`). */
  get(): Weight {
    if (this.value === null) throw new LlmError('invalid-request', `weight ${this.name} read before it was loaded`);
    return this.value;
  }
  set(w: Weight): void {
    this.value = w;
  }
}

/** One tensor to read: its info and the row ranges uploaded as weights (one part unless a fused matrix is split). */
interface Job {
  readonly info: GgufTensorInfo;
  readonly rowBytes: number;
  readonly parts: readonly {
    readonly name: string;
    readonly shape: readonly number[];
    readonly rowStart: number;
    readonly nRows: number;
    readonly slot: WeightSlot;
  }[];
}

/** Bytes per streamed piece (rounded to whole rows, a multiple of 4): big enough to amortise a read, small for RAM. */
const PIECE_BYTES = 4 << 20;

/** One piece of a streamed upload: `length` bytes at `offset` of part `part` of `job`. */
interface Piece {
  readonly job: Job;
  readonly part: number;
  readonly offset: number;
  readonly length: number;
  readonly isLastOfPart: boolean;
  readonly isLastOfJob: boolean;
}

/** Reads tensors by name and uploads them, checking shapes and reporting progress. */
export class WeightLoader {
  private readonly byName: Map<string, GgufTensorInfo>;
  private readonly totalBytes: number;
  private loadedBytes = 0;
  private readonly jobs: Job[] = [];

  constructor(
    private readonly gguf: GgufFile,
    private readonly source: ByteSource,
    private readonly ops: Ops,
    private readonly options: WeightLoaderOptions,
  ) {
    this.byName = new Map(gguf.tensors.map((t) => [t.name, t]));
    this.totalBytes = gguf.tensors.reduce((s, t) => s + t.byteLength, 0);
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The tensor's header entry (`gguf-invalid` naming it when missing). */
  info(name: string): GgufTensorInfo {
    const info = this.byName.get(name);
    if (!info) return this.require(name, []);
    return info;
  }

  /** Names a required tensor whose ggml shape must equal `shape`. */
  upload(name: string, shape: readonly number[]): WeightSlot {
    const info = this.require(name, shape);
    const nRows = shape.slice(1).reduce((a, b) => a * b, 1);
    const slot = new WeightSlot(name);
    this.jobs.push({
      info,
      rowBytes: info.byteLength / nRows,
      parts: [{ name, shape: info.shape, rowStart: 0, nRows, slot }],
    });
    return slot;
  }

  /** Names a required tensor of ggml shape `shape`, uploaded as one 1-D vector of all its elements (per-expert biases). */
  uploadVector(name: string, shape: readonly number[]): WeightSlot {
    const info = this.require(name, shape);
    const slot = new WeightSlot(name);
    const parts = [{ name, shape: [info.nElements], rowStart: 0, nRows: 1, slot }];
    this.jobs.push({ info, rowBytes: info.byteLength, parts });
    return slot;
  }

  /** Names a tensor when present; null otherwise. */
  optional(name: string, shape: readonly number[]): WeightSlot | null {
    return this.has(name) ? this.upload(name, shape) : null;
  }

  /**
   * Names a fused matrix uploaded as consecutive row ranges, each as its own weight (rows are contiguous in GGUF);
   * `shape` is its ggml shape when not [rowLength, total rows] (a 3-D stack split per matrix).
   */
  uploadSplit(
    name: string,
    rowLength: number,
    parts: readonly (readonly [string, number])[],
    shape?: readonly number[],
  ): WeightSlot[] {
    const totalRows = parts.reduce((s, [, rows]) => s + rows, 0);
    const info = this.require(name, shape ?? [rowLength, totalRows]);
    let rowStart = 0;
    const jobParts = parts.map(([partName, nRows]) => {
      const part = { name: partName, shape: [rowLength, nRows], rowStart, nRows, slot: new WeightSlot(partName) };
      rowStart += nRows;
      return part;
    });
    this.jobs.push({ info, rowBytes: info.byteLength / totalRows, parts: jobParts });
    return jobParts.map((p) => p.slot);
  }

  /** Reads the bytes of a tensor kept on the host (checked for non-finite values; reported as progress). */
  async readHost(name: string, shape: readonly number[]): Promise<{ info: GgufTensorInfo; bytes: Uint8Array }> {
    const info = this.require(name, shape);
    throwIfAborted(this.options.signal, 'loading model weights');
    const bytes = await this.source.read(this.fileOffset(info), info.byteLength, this.options.signal);
    this.scan(info, bytes, 0);
    this.progress(info);
    return { info, bytes };
  }

  /** A tensor's values on the host as f32, [rows, rowLength] row-major (dequantized row by row; F32 copied). */
  async readHostF32(name: string, shape: readonly number[]): Promise<Float32Array> {
    const { info, bytes } = await this.readHost(name, shape);
    const rowLength = info.shape[0]!;
    const rows = info.nElements / rowLength;
    const rowBytes = info.byteLength / rows;
    const out = new Float32Array(info.nElements); // [rows, rowLength]
    for (let r = 0; r < rows; r++) {
      const src = bytes.subarray(r * rowBytes, (r + 1) * rowBytes);
      const dst = out.subarray(r * rowLength, (r + 1) * rowLength);
      if (info.type === GgmlType.F32) new Uint8Array(dst.buffer, dst.byteOffset, dst.byteLength).set(src);
      else getQuantType(info.type).dequantizeRow(src, dst, rowLength);
    }
    return out;
  }

  /**
   * Reads `length` bytes from byte `start` of a tensor (whole blocks; checked for non-finite values), for a tensor the
   * caller re-lays out itself; the tensor counts as loaded once `last` is set.
   */
  async readRange(
    name: string,
    shape: readonly number[],
    start: number,
    length: number,
    last: boolean,
  ): Promise<Uint8Array> {
    const info = this.require(name, shape);
    throwIfAborted(this.options.signal, 'loading model weights');
    const bytes = await this.source.read(this.fileOffset(info) + start, length, this.options.signal);
    this.scan(info, bytes, start);
    if (last) this.progress(info);
    return bytes;
  }

  /** Uploads a weight the caller built (a re-laid-out part of a tensor read with `readRange`). */
  uploadBuilt(info: WeightInfo, data: Uint8Array): Promise<Weight> {
    return this.named(info.name, () => this.ops.uploadWeight(info, data, this.options.signal));
  }

  /** Reads and uploads every named tensor, in file order; fills their slots. */
  async loadAll(): Promise<void> {
    const jobs = [...this.jobs].sort((a, b) => a.info.offset - b.info.offset);
    this.ops.reserveWeights?.(jobs.reduce((n, j) => n + j.info.byteLength, 0));
    if (this.ops.beginWeight) await this.stream(jobs, this.ops.beginWeight.bind(this.ops));
    else for (const job of jobs) await this.whole(job);
  }

  /** Reads `job`'s tensor whole and uploads each part with `uploadWeight`. */
  private async whole(job: Job): Promise<void> {
    const { info, rowBytes } = job;
    throwIfAborted(this.options.signal, 'loading model weights');
    const bytes = await this.source.read(this.fileOffset(info), info.byteLength, this.options.signal);
    this.scan(info, bytes, 0);
    for (const part of job.parts) {
      const slice = bytes.subarray(part.rowStart * rowBytes, (part.rowStart + part.nRows) * rowBytes);
      part.slot.set(
        await this.named(part.name, () =>
          this.ops.uploadWeight({ name: part.name, type: info.type, shape: part.shape }, slice, this.options.signal),
        ),
      );
    }
    this.progress(info);
  }

  /**
   * Streams every job piece by piece: piece k + 1 is being read while piece k is committed (two in flight at most, as
   * `WeightStream` allows). Streams are begun between reads, never while one is in flight (a backend may place memory
   * there). On any failure the read in flight is awaited and unfinished streams are cancelled.
   */
  private async stream(
    jobs: readonly Job[],
    begin: (info: { name: string; type: number; shape: readonly number[] }) => WeightStream,
  ): Promise<void> {
    const { signal } = this.options;
    const open = new Set<WeightStream>();
    const streams = new Map<string, WeightStream>(); // by part name, while open
    const pieces = piecesOf(jobs, this.options.pieceBytes ?? PIECE_BYTES);
    type Started = { piece: Piece; stream: WeightStream; bytes: Uint8Array; read: Promise<void> };
    const start = (piece: Piece): Started => {
      throwIfAborted(signal, 'loading model weights');
      const part = piece.job.parts[piece.part];
      let stream = streams.get(part.name);
      if (stream === undefined) {
        stream = this.named(part.name, () => begin({ name: part.name, type: piece.job.info.type, shape: part.shape }));
        streams.set(part.name, stream);
        open.add(stream);
      }
      const bytes = stream.target(piece.offset, piece.length);
      const at = this.fileOffset(piece.job.info) + part.rowStart * piece.job.rowBytes + piece.offset;
      return { piece, stream, bytes, read: readInto(this.source, at, bytes, signal) };
    };
    let next = pieces.next();
    let current: Started | null = next.done ? null : start(next.value);
    let ahead: Started | null = null;
    try {
      while (current !== null) {
        await current.read;
        const { piece, stream, bytes } = current;
        const part = piece.job.parts[piece.part];
        const at = part.rowStart * piece.job.rowBytes + piece.offset; // of the piece in its tensor
        // Scanned before the next piece is begun: beginning one may move a non-shared backend memory under `bytes`.
        // A stream that checks in its own pass (`commitChecked`: the WASM 4-row interleave) is not scanned twice.
        if (!stream.commitChecked) this.scan(piece.job.info, bytes, at);
        next = pieces.next();
        ahead = next.done ? null : start(next.value);
        if (stream.commitChecked) this.fail(piece.job.info, stream.commitChecked(piece.offset, piece.length), at);
        else stream.commit(piece.offset, piece.length);
        if (piece.isLastOfPart) {
          part.slot.set(await stream.finish());
          open.delete(stream);
          streams.delete(part.name);
        }
        if (piece.isLastOfJob) this.progress(piece.job.info);
        current = ahead;
        ahead = null;
      }
    } catch (e) {
      await ahead?.read.catch(() => undefined); // no read may still write into memory being released
      for (const s of open) s.cancel();
      throw e;
    }
  }

  /** Runs a backend call, naming the tensor in an `unsupported-type` error (the backend's message knows the type). */
  private named<T>(name: string, f: () => T): T {
    const rename = (e: unknown): never => {
      if (isLlmError(e, 'unsupported-type'))
        throw new LlmError('unsupported-type', `loading model: tensor '${name}': ${e.message}`, {
          cause: e,
          details: { tensor: name },
        });
      throw e;
    };
    try {
      const out = f();
      return out instanceof Promise ? (out.catch(rename) as T) : out;
    } catch (e) {
      return rename(e);
    }
  }

  private fileOffset(info: GgufTensorInfo): number {
    return this.gguf.tensorDataOffset + info.offset;
  }

  private progress(info: GgufTensorInfo): void {
    this.loadedBytes += info.byteLength;
    this.options.onProgress?.({ loadedBytes: this.loadedBytes, totalBytes: this.totalBytes, tensor: info.name });
  }

  /** Throws `gguf-invalid` naming the tensor when `bytes` (starting `byteOffset` bytes into it) hold a NaN or Inf. */
  private scan(info: GgufTensorInfo, bytes: Uint8Array, byteOffset: number): void {
    this.fail(info, firstNonFinite(info.type, bytes), byteOffset);
  }

  /** Throws `gguf-invalid` naming the tensor when `bad` (the first non-finite element of a piece, or -1) is one. */
  private fail(info: GgufTensorInfo, bad: number, byteOffset: number): void {
    if (bad < 0) return;
    const element = bad + Math.round((byteOffset / info.byteLength) * info.nElements);
    throw new LlmError(
      'gguf-invalid',
      `loading model: tensor '${info.name}' holds a non-finite value (NaN or Inf) at element ${element}; the model would produce non-finite output — ` +
        'the file is broken, re-convert or re-download it',
      { details: { tensor: info.name, element } },
    );
  }

  private require(name: string, shape: readonly number[]): GgufTensorInfo {
    const info = this.byName.get(name);
    if (!info) {
      throw new LlmError('gguf-invalid', `loading model: tensor '${name}' is missing from ${this.source.name}`, {
        details: { tensor: name },
      });
    }
    const same = info.shape.length === shape.length && info.shape.every((d, i) => d === shape[i]);
    if (!same) {
      throw new LlmError(
        'gguf-invalid',
        `loading model: tensor '${name}' has shape [${info.shape.join(', ')}], the config implies [${shape.join(', ')}]`,
        { details: { tensor: name, shape: info.shape.join(','), expected: shape.join(',') } },
      );
    }
    return info;
  }
}

/** The pieces of every job in order: whole rows, a multiple of 4 rows each but the last of a part. */
function* piecesOf(jobs: readonly Job[], pieceBytes: number): Generator<Piece> {
  for (const job of jobs) {
    const rowsPerPiece = Math.max(4, Math.floor(pieceBytes / job.rowBytes / 4) * 4);
    for (const [p, part] of job.parts.entries()) {
      const partBytes = part.nRows * job.rowBytes;
      for (let offset = 0; offset < partBytes || (offset === 0 && partBytes === 0); ) {
        const length = Math.min(rowsPerPiece * job.rowBytes, partBytes - offset);
        const isLastOfPart = offset + length >= partBytes;
        yield { job, part: p, offset, length, isLastOfPart, isLastOfJob: isLastOfPart && p === job.parts.length - 1 };
        offset += length;
        if (length === 0) break;
      }
    }
  }
}
