/**
 * A step's multi-stream rope positions on the GPU (`StepBatch.positions`, `rope-multi.ts`): one (capacity) i32
 * buffer holding the [4, n] streams of the step's rows, and after them the [4, 1] streams of each sequence of a
 * multi-sequence step (`setSequence` with positions: n choices after an image), each at its own offset, so the whole
 * step is recorded and submitted once — rope_multi.wgsl reads `pos[offset + stream · n + row]`. The buffer is
 * refilled from offset 0 at each step (written after the previous step's dispatches were flushed); a text step or
 * sequence writes nothing and the kernel derives its positions.
 */

import { BufferUsage } from './gpu-flags.js';

/** What the position buffer needs of the backend. */
interface RopePositionsHost {
  readonly device: GPUDevice;
  buffer(label: string, size: number, extraUsage: number): GPUBuffer;
  /** Submits what was recorded (dispatches bound to the buffer), then destroys the buffer. */
  release(b: GPUBuffer): void;
}

/** See the file header. */
export class RopePositions {
  private capacity = 0; // i32 entries
  private positions: GPUBuffer | null = null; // (capacity) i32: [4, n] streams of the step, then [4, 1] per sequence
  private used = 0; // i32 entries written since the step began
  /** The current rows have explicit streams (false: text rows at their KV positions). */
  explicit = false;
  /** The i32 entry where the current rows' streams start. */
  offset = 0;

  constructor(private readonly h: RopePositionsHost) {}

  /** The buffer rope_multi binds (`fallback` while none was ever written). */
  buffer(fallback: GPUBuffer): GPUBuffer {
    return this.positions ?? fallback;
  }

  /**
   * A new step (everything recorded before it was submitted): queues the write of its streams ([4, n] i32) at
   * offset 0, or marks its rows as text (none).
   */
  begin(streams: Int32Array | undefined): void {
    this.used = 0;
    this.select(streams);
  }

  /**
   * A sequence of the step (`setSequence`): queues the write of its streams after those written so far in the step,
   * so the dispatches recorded for the earlier sequences still read theirs; or marks its rows as text (none).
   */
  select(streams: Int32Array | undefined): void {
    this.explicit = streams !== undefined && streams.length > 0;
    if (!streams || !this.explicit) return;
    if (this.used + streams.length > this.capacity) {
      // Grow: release submits the dispatches bound to the old buffer, so the new one starts empty.
      if (this.positions) this.h.release(this.positions);
      this.capacity = Math.max(2 * this.capacity, streams.length, 64);
      this.positions = this.h.buffer('rope-positions', this.capacity * 4, BufferUsage.COPY_DST);
      this.used = 0;
    }
    this.offset = this.used;
    this.h.device.queue.writeBuffer(
      this.positions!,
      this.offset * 4,
      streams.buffer,
      streams.byteOffset,
      streams.byteLength,
    );
    this.used += streams.length;
  }
}
