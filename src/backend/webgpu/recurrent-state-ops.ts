/**
 * Recurrent state on the GPU (short-convolution layers, lfm2): one buffer of (nSlots, Σ layer sizes) f32, allocated
 * once, and the `short_conv` kernel's two dispatches per layer inside the step's submission (convolution over all
 * the step's tokens in parallel, then the state update; each row on its own slot in a step of several sequences: `sequenceChunks`). Slot copies are buffer copies; snapshots read and write a
 * slot's row of the buffer.
 */

import { LlmError } from '../../errors.js';
import type { RecurrentStateSpec, StepBatch, Weight } from '../ops.js';
import { BufferUsage } from './gpu-flags.js';
import type { GpuActivation } from './gpu-resources.js';
import type { CachedPipeline, PipelineSpec } from './pipelines.js';
import { grid, type ParamsWriter, type StepRecorder } from './step-recorder.js';

const WG_FLAT = 256;

/** What the recurrent state needs of the backend. */
export interface RecurrentStateHost {
  readonly device: GPUDevice;
  readonly rec: StepRecorder;
  pipe(spec: Omit<PipelineSpec, 'quant'>): CachedPipeline;
  buffer(label: string, size: number, extraUsage: number): GPUBuffer;
  release(b: GPUBuffer): void;
  /** The f32 buffer of a 1-D weight. */
  vec(w: Weight): GPUBuffer;
}

/** The step a recurrent op records into: n rows of one sequence, or one row per sequence of `sequences`. */
export interface RecurrentStep {
  readonly startPos: number;
  readonly slot: number;
  readonly n: number;
  readonly sequences?: StepBatch['sequences'];
}

/** Rows one dispatch of a recurrent kernel takes as separate sequences (its `seq_at` holds 8 state offsets). */
const MAX_SEQ_ROWS = 8;

/**
 * Rows of a step recorded by one dispatch of a recurrent kernel: one sequence (`seqs` 0: the rows are consecutive
 * tokens of the sequence whose state is at `at`), or up to 8 rows that are each one token of its own sequence (the
 * kernels' `seqs`, `seq_fresh` and `seq_at0` … `seq_at7`: row t's state at `ats[t]`, bit t of `freshMask` when it starts there).
 */
export interface SequenceChunk {
  readonly row0: number;
  readonly rows: number;
  readonly seqs: number;
  readonly at: number;
  readonly fresh: boolean;
  readonly ats: readonly number[];
  readonly freshMask: number;
}

/** The dispatches' chunks of a recurrent op over the step's n rows; `at(slot)`: f32 index of the layer's state there. */
export function sequenceChunks(step: RecurrentStep, n: number, at: (slot: number) => number): SequenceChunk[] {
  const seqs = step.sequences;
  if (!seqs)
    return [{ row0: 0, rows: n, seqs: 0, at: at(step.slot), fresh: step.startPos === 0, ats: [], freshMask: 0 }];
  if (seqs.length !== n) {
    throw new LlmError('invalid-request', `recurrent op over ${n} rows of a step of ${seqs.length} sequences`, {
      details: { rows: n, sequences: seqs.length },
    });
  }
  const chunks: SequenceChunk[] = [];
  for (let row0 = 0; row0 < n; row0 += MAX_SEQ_ROWS) {
    const rows = Math.min(MAX_SEQ_ROWS, n - row0);
    const ats: number[] = [];
    let freshMask = 0;
    for (let t = 0; t < rows; t++) {
      ats.push(at(seqs[row0 + t].slot));
      if (seqs[row0 + t].pos === 0) freshMask |= 1 << t;
    }
    chunks.push({ row0, rows, seqs: rows, at: 0, fresh: false, ats, freshMask });
  }
  return chunks;
}

/** Writes a chunk's `seqs`, `seq_fresh` and `seq_at0` … `seq_at7`: the last fields of a recurrent kernel's params. */
export function writeSequences(p: ParamsWriter, c: SequenceChunk): void {
  p.u(c.seqs).u(c.freshMask);
  for (let t = 0; t < MAX_SEQ_ROWS; t++) p.u(c.ats[t] ?? 0);
}

/** See the file header. */
export class RecurrentStateOps {
  private state: GPUBuffer | null = null; // (nSlots, slotValues) f32
  private spec: RecurrentStateSpec | null = null;
  private layerAt: number[] = []; // f32 index of each layer's state within a slot's row
  private slotValues = 0;

  constructor(private readonly h: RecurrentStateHost) {}

  create(spec: RecurrentStateSpec): void {
    if (this.state) this.h.release(this.state);
    this.spec = spec;
    this.layerAt = [];
    let at = 0;
    for (const size of spec.layerSizes) {
      this.layerAt.push(at);
      at += size;
    }
    this.slotValues = at;
    const usage = BufferUsage.COPY_SRC | BufferUsage.COPY_DST;
    this.state = this.h.buffer('recurrent_state', Math.max(16, spec.nSlots * at * 4), usage); // zeros
  }

  /** Records the two dispatches of `Ops.shortConv` for `layer` of the step's slot, or of each row's (`sequenceChunks`). */
  shortConv(
    step: RecurrentStep,
    out: GpuActivation,
    bcx: GpuActivation,
    layer: number,
    n: number,
    kernelWeight: Weight,
  ): void {
    const [kernel, taps, channels] = [this.h.vec(kernelWeight), kernelWeight.rowLength, kernelWeight.nRows];
    this.require('shortConv', step.slot);
    if (this.spec!.layerSizes[layer] !== (taps - 1) * channels || bcx.cols < 3 * channels || out.cols < channels) {
      throw new LlmError(
        'invalid-request',
        `shortConv of layer ${layer}: ${taps} taps × ${channels} channels do not match its state or buffers`,
        { details: { layer, taps, channels } },
      );
    }
    const state = this.state!;
    for (const c of sequenceChunks(
      step,
      n,
      (slot) => this.locate('shortConv', slot, layer, (taps - 1) * channels).at,
    )) {
      const params = (p: ParamsWriter): void => {
        p.u(c.rows)
          .u(channels)
          .u(taps)
          .u(bcx.cols)
          .u(out.cols)
          .u(c.at)
          .u(c.fresh ? 1 : 0)
          .u(0)
          .u(c.row0);
        writeSequences(p, c);
      };
      const conv = this.h.pipe({ kernel: 'short_conv', wgSize: WG_FLAT });
      const groups = grid(Math.ceil((c.rows * channels) / WG_FLAT));
      this.h.rec.dispatch(conv, [null, bcx.buffer, state, kernel, out.buffer], params, groups);
      const update = this.h.pipe({ kernel: 'short_conv', entry: 'update', wgSize: WG_FLAT });
      const updates = grid(Math.ceil(((c.seqs === 0 ? 1 : c.rows) * channels) / WG_FLAT));
      this.h.rec.dispatch(update, [null, bcx.buffer, state], params, updates);
    }
  }

  /** The state buffer and the f32 index of `layer`'s state in `slot`, checked to hold `size` values. */
  locate(op: string, slot: number, layer: number, size: number): { readonly state: GPUBuffer; readonly at: number } {
    const state = this.require(op, slot);
    if (this.spec!.layerSizes[layer] !== size) {
      throw new LlmError(
        'invalid-request',
        `${op} of layer ${layer}: its state holds ${this.spec!.layerSizes[layer]} values, ${size} asked`,
        {
          details: { layer, size },
        },
      );
    }
    return { state, at: slot * this.slotValues + this.layerAt[layer]! };
  }

  /** Records a copy of one slot's state into another; false when there is nothing to copy. */
  copy(srcSlot: number, dstSlot: number): boolean {
    const state = this.require('copyRecurrentState', Math.max(srcSlot, dstSlot));
    if (srcSlot === dstSlot || this.slotValues === 0) return false;
    const count = this.slotValues;
    const pipe = this.h.pipe({ kernel: 'short_conv', entry: 'copy', wgSize: WG_FLAT });
    this.h.rec.dispatch(
      pipe,
      [null, null, state],
      (p) => {
        p.u(count)
          .u(0)
          .u(0)
          .u(0)
          .u(0)
          .u(srcSlot * count)
          .u(0)
          .u(dstSlot * count);
      },
      grid(Math.ceil(count / WG_FLAT)),
    );
    return true;
  }

  async read(slot: number): Promise<Float32Array> {
    const state = this.require('readRecurrentState', slot);
    const bytes = this.slotValues * 4;
    if (bytes === 0) return new Float32Array(0);
    return new Float32Array(await this.h.rec.read(state, slot * bytes, bytes)); // [Σ layer sizes]
  }

  write(slot: number, values: Float32Array): void {
    const state = this.require('writeRecurrentState', slot);
    if (values.length !== this.slotValues) {
      throw new LlmError(
        'invalid-request',
        `writeRecurrentState: ${values.length} values, a slot holds ${this.slotValues}`,
        { details: { slot, values: values.length, expected: this.slotValues } },
      );
    }
    this.h.rec.flush(); // recorded work first, then the write, in queue order
    this.h.device.queue.writeBuffer(
      state,
      slot * this.slotValues * 4,
      values.buffer,
      values.byteOffset,
      values.byteLength,
    );
  }

  private require(op: string, slot: number): GPUBuffer {
    if (!this.state || !this.spec) throw new LlmError('invalid-request', `${op}: no recurrent state was created`);
    if (!(Number.isInteger(slot) && slot >= 0 && slot < this.spec.nSlots)) {
      throw new LlmError('invalid-request', `${op}: slot ${slot} does not exist (${this.spec.nSlots} slots)`, {
        details: { slot, nSlots: this.spec.nSlots },
      });
    }
    return this.state;
  }
}
