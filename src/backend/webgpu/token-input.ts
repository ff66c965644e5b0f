/**
 * The step's token ids on the GPU: one (capacity) i32 buffer that `embed` reads, grown with the largest activation
 * so that any batch an activation can hold fits, and written once per step before its dispatches — by the host, or
 * on the device by the previous step's argmax (`argmaxToInput`: pipelined greedy decode), which the host then skips.
 */

import { LlmError } from '../../errors.js';
import { BufferUsage } from './gpu-flags.js';
import type { RecorderStats } from './step-recorder.js';

/** What the token buffer needs of the backend. */
interface TokenInputHost {
  readonly device: GPUDevice;
  /** Counts host writes of token ids (`tokenWrites`). */
  readonly rec: { readonly stats: RecorderStats };
  buffer(label: string, size: number, extraUsage: number): GPUBuffer;
  release(b: GPUBuffer): void;
}

/** See the file header. */
export class TokenInput {
  private capacity = 512;
  private tokens: GPUBuffer; // (capacity) i32 token ids of the step

  constructor(private readonly h: TokenInputHost) {
    this.tokens = h.buffer('tokens', this.capacity * 4, BufferUsage.COPY_DST | BufferUsage.COPY_SRC);
  }

  /** The buffer `embed` binds. */
  get buffer(): GPUBuffer {
    return this.tokens;
  }

  /** Grows the buffer to hold `rows` token ids (an activation of that many rows was created). */
  ensure(rows: number): void {
    if (rows <= this.capacity) return;
    this.h.release(this.tokens);
    this.capacity = rows;
    this.tokens = this.h.buffer('tokens', rows * 4, BufferUsage.COPY_DST | BufferUsage.COPY_SRC);
  }

  /** Queues the write of a step's ids; a batch larger than any activation is `invalid-request`. */
  write(ids: Int32Array): void {
    const n = ids.length;
    if (n > this.capacity) {
      throw new LlmError(
        'invalid-request',
        `beginStep: ${n} tokens exceed the largest activation (${this.capacity} rows); split the batch`,
        { details: { tokens: n, maxRows: this.capacity } },
      );
    }
    if (n === 0) return;
    this.h.device.queue.writeBuffer(this.tokens, 0, ids.buffer, ids.byteOffset, n * 4);
    this.h.rec.stats.tokenWrites++;
  }
}
