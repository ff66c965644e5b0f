/**
 * The RoPE inverse-frequency tables on the GPU, one storage buffer per parameter set (theta, nRot, freqFactors
 * array), built once and kept for the backend's lifetime.
 */

import { BufferUsage } from './gpu-flags.js';
import type { RopeParams } from '../ops.js';
import { ropeInverseFrequencies } from './rope-table.js';

/** What the table cache needs of the backend. */
export interface RopeTableHost {
  readonly device: GPUDevice;
  buffer(label: string, size: number, extraUsage: number): GPUBuffer;
}

/** See the file header. */
export class RopeTableCache {
  private readonly tables = new Map<string, GPUBuffer>(); // (nRot/2) f32 inverse frequencies
  private readonly arrayIds = new WeakMap<Float32Array, number>(); // freqFactors identity → table key
  private nextArrayId = 0;

  constructor(private readonly h: RopeTableHost) {}

  /** Inverse frequencies theta^(−2i/nRot) / freqFactors[i], computed in f64, cached per parameter set. */
  get(params: RopeParams): GPUBuffer {
    let ffId = 0;
    if (params.freqFactors) {
      ffId = this.arrayIds.get(params.freqFactors) ?? ++this.nextArrayId;
      this.arrayIds.set(params.freqFactors, ffId);
    }
    const key = `${params.theta}|${params.nRot}|${ffId}`;
    let table = this.tables.get(key);
    if (!table) {
      const inv = ropeInverseFrequencies(params);
      table = this.h.buffer(`rope-inv-freq.${key}`, inv.byteLength, BufferUsage.COPY_DST);
      this.h.device.queue.writeBuffer(table, 0, inv);
      this.tables.set(key, table);
    }
    return table;
  }
}
