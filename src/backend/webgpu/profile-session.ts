/**
 * One structural profile in progress (see profile.ts): the collector the backend reports matmul and attention
 * dispatches to, and the recorder counters at its start.
 */

import { LlmError } from '../../errors.js';
import type { GpuWeight } from './gpu-resources.js';
import { ProfileCollector, type StepProfile } from './profile.js';
import type { RecorderStats, StepRecorder } from './step-recorder.js';
import { rowBytes } from './upload.js';

/** See the file header. */
export class ProfileSession {
  private prof: { collector: ProfileCollector; start: RecorderStats } | null = null;

  constructor(private readonly rec: StepRecorder) {}

  /** The running profile's collector, or null when none runs. */
  get collector(): ProfileCollector | null {
    return this.prof?.collector ?? null;
  }

  /** Starts collecting (the caller has submitted what was recorded before). */
  begin(): void {
    const collector = new ProfileCollector();
    this.prof = { collector, start: { ...this.rec.stats } };
    this.rec.onDispatch = (label) => collector.dispatch(label);
  }

  /** Ends the profile begun by `begin` (its work must have been submitted and read back). */
  end(layers: number, tokens: number): StepProfile {
    if (!this.prof) throw new LlmError('invalid-request', 'endProfile without beginProfile');
    const { collector, start } = this.prof;
    this.prof = null;
    this.rec.onDispatch = null;
    const s = this.rec.stats;
    return collector.summarize(
      {
        dispatches: s.dispatches - start.dispatches,
        submissions: s.submissions - start.submissions,
        bytesRead: s.bytesRead - start.bytesRead,
        tokenWrites: s.tokenWrites - start.tokenWrites,
      },
      layers,
      tokens,
    );
  }

  /** Reports one matmul dispatch to the profiler: `reads` = times each weight row is loaded (tokens or token tiles). */
  matmul(
    kernel: string,
    ws: readonly GpuWeight[],
    nRows: number,
    n: number,
    groups: readonly number[],
    wgSize: number,
    reads: number,
  ): void {
    const collector = this.collector;
    if (!collector) return;
    const w = ws[0]!;
    // Q|K|V: nRows counts the rows of all three; gate|up: each output row reads a gate and an up row.
    const weightRows = w.group?.kind === 'qkv' && ws.length === 3 ? nRows : ws.length * nRows;
    const logical = weightRows * (w.rowLength / w.layout.blockElements) * w.layout.blockBytes;
    collector.matmul({
      name: ws.map((x) => x.name).join('+'),
      kernel,
      rows: nRows,
      cols: w.rowLength,
      tokens: n,
      workgroups: groups[0]! * groups[1]! * groups[2]!,
      wgSize,
      weightBytesLogical: logical,
      weightBytesLoaded: weightRows * rowBytes(w.layout, w.rowLength) * reads,
      rowAlign: Math.min(16, (w.rowStride * 4) & -(w.rowStride * 4)),
    });
  }
}
