/**
 * The one `WebAssembly.Memory` of the WASM backend and a bump allocator over it. Weights, activations, the KV
 * cache and scratch space all live here so kernels (and helper threads, for a shared memory) address them directly.
 * Memory grows as buffers are placed; wasm32 caps it at 4 GiB, past which placing fails with LlmError('out-of-memory').
 */

import { LlmError } from '../../errors.js';

/** Bytes per WebAssembly page. */
const PAGE_BYTES = 65536;
/** wasm32's addressable maximum: 65536 pages = 4 GiB. */
export const WASM32_MAX_PAGES = 65536;
/** Smallest growth step of the memory: 64 MiB. */
const GROW_MIN_PAGES = 1024;
/** First address handed out (0 stays unused so a zero offset is never a valid buffer). */
const HEAP_START = 1024;

/** A region of the heap. */
export interface HeapRegion {
  readonly byteOffset: number;
  readonly byteLength: number;
}

/** One memory plus typed-array views that follow its growth. */
export class WasmHeap {
  readonly memory: WebAssembly.Memory;
  readonly isShared: boolean;
  private readonly maxPages: number;
  private top = HEAP_START;
  private u8View: Uint8Array;
  private f32View: Float32Array;
  private i32View: Int32Array;

  /** Creates the memory; a shared one needs a declared maximum (`maxPages`, at most 65536). */
  constructor(isShared: boolean, maxPages = WASM32_MAX_PAGES) {
    this.isShared = isShared;
    this.maxPages = Math.min(maxPages, WASM32_MAX_PAGES);
    this.memory = isShared
      ? new WebAssembly.Memory({ initial: 16, maximum: this.maxPages, shared: true })
      : new WebAssembly.Memory({ initial: 16 });
    this.u8View = new Uint8Array(this.memory.buffer);
    this.f32View = new Float32Array(this.memory.buffer);
    this.i32View = new Int32Array(this.memory.buffer);
  }

  /** Bytes handed out so far (the high-water mark). */
  get usedBytes(): number {
    return this.top;
  }

  /** Byte view of the whole memory (re-created when `alloc` grows it; do not keep one across `alloc`). */
  get u8(): Uint8Array {
    return this.u8View;
  }

  /** f32 view of the whole memory (index = byteOffset / 4). */
  get f32(): Float32Array {
    return this.f32View;
  }

  /** i32 view of the whole memory (index = byteOffset / 4). */
  get i32(): Int32Array {
    return this.i32View;
  }

  /**
   * Places `byteLength` bytes at an `align`-aligned offset, growing the memory as needed. Contents are zero for
   * fresh memory (the allocator never reuses space).
   * @throws LlmError('out-of-memory') with the numbers when the 4 GiB wasm32 space (or the engine) cannot hold it.
   */
  alloc(byteLength: number, what: string, align = 64): HeapRegion {
    const byteOffset = Math.ceil(this.top / align) * align;
    const end = byteOffset + byteLength;
    const neededPages = Math.ceil(end / PAGE_BYTES);
    const havePages = this.u8View.byteLength / PAGE_BYTES;
    if (neededPages > havePages) {
      const fail = (cause?: unknown): never => {
        throw new LlmError(
          'out-of-memory',
          `placing ${what} (${fmtMiB(byteLength)}) in WASM memory: it would need ${fmtMiB(end)} in all, ` +
            `${fmtMiB(byteOffset)} being in use, and this WASM memory holds at most ${fmtMiB(this.maxPages * PAGE_BYTES)}. ` +
            'Use a smaller model or quantization, a shorter context, or the WebGPU backend.',
          { cause, details: { what, byteLength, usedBytes: byteOffset, maxBytes: this.maxPages * PAGE_BYTES } },
        );
      };
      if (neededPages > this.maxPages) fail();
      // Grow by at least a quarter (and 64 MiB): every grow costs V8 a garbage collection ("external memory
      // pressure"), once per tensor of a model load otherwise (≈300 for a 0.5B model, 1.7 s). Untouched pages cost
      // no RAM. Exactly what is needed when the larger step is refused.
      const step = Math.min(this.maxPages, Math.max(neededPages, havePages + Math.max(havePages >> 2, GROW_MIN_PAGES)));
      try {
        this.memory.grow(step - havePages);
      } catch {
        try {
          this.memory.grow(neededPages - havePages);
        } catch (cause) {
          fail(cause);
        }
      }
      this.refresh();
    }
    this.top = end;
    return { byteOffset, byteLength };
  }

  /**
   * Grows the memory in one step so that `byteLength` more bytes fit above what is in use (a hint before many
   * `alloc`s, e.g. a model's weights: one grow, one GC, instead of one per step). Nothing is placed; a grow the
   * engine refuses (or one past the maximum) is ignored (`alloc` then grows as it goes and reports what does not fit).
   */
  reserve(byteLength: number): void {
    const neededPages = Math.ceil((this.top + byteLength) / PAGE_BYTES);
    const havePages = this.u8View.byteLength / PAGE_BYTES;
    if (neededPages <= havePages || neededPages > this.maxPages) return;
    try {
      this.memory.grow(neededPages - havePages);
    } catch {
      return;
    }
    this.refresh();
  }

  /**
   * Only `alloc` and `reserve` grow the memory (helper threads never do), so views are refreshed there and nowhere else:
   * reading `memory.buffer` costs about half a microsecond, too much for every op of a decode step.
   */
  private refresh(): void {
    const buffer = this.memory.buffer;
    if (this.u8View.byteLength !== buffer.byteLength) {
      this.u8View = new Uint8Array(buffer);
      this.f32View = new Float32Array(buffer);
      this.i32View = new Int32Array(buffer);
    }
  }
}

function fmtMiB(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}
