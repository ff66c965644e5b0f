/**
 * A step's multi-stream rope positions on the GPU (`StepBatch.positions`, `rope-multi.ts`): one (capacity) i32
 * buffer holding the [4, n] streams of an image's rows, written once per step (after the previous step's dispatches
 * were flushed) and read by rope_multi.wgsl; a text step writes nothing and the kernel derives its positions.
 */

import { BufferUsage } from './gpu-flags.js';

/** What the position buffer needs of the backend. */
interface RopePositionsHost {
  readonly device: GPUDevice;
  buffer(label: string, size: number, extraUsage: number): GPUBuffer;
  release(b: GPUBuffer): void;
}

/** See the file header. */
export class RopePositions {
  private capacity = 0; // i32 entries
  private positions: GPUBuffer | null = null; // (capacity) i32: [4, n] streams of the step
  /** The step's rows have explicit streams (false: text rows at their KV positions). */
  explicit = false;

  constructor(private readonly h: RopePositionsHost) {}

  /** The buffer rope_multi binds (`fallback` while none was ever written). */
  buffer(fallback: GPUBuffer): GPUBuffer {
    return this.positions ?? fallback;
  }

  /** Queues the write of a step's streams ([4, n] i32), or marks the step's rows as text (none). */
  write(streams: Int32Array | undefined): void {
    this.explicit = streams !== undefined && streams.length > 0;
    if (!streams || !this.explicit) return;
    if (streams.length > this.capacity) {
      if (this.positions) this.h.release(this.positions);
      this.capacity = streams.length;
      this.positions = this.h.buffer('rope-positions', this.capacity * 4, BufferUsage.COPY_DST);
    }
    this.h.device.queue.writeBuffer(this.positions!, 0, streams.buffer, streams.byteOffset, streams.byteLength);
  }
}
