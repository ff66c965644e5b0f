/**
 * Structural profile of recorded WebGPU work (no timing): what each step dispatches, submits and reads back, and
 * for every matrix product and attention call how many bytes its kernel loads against the bytes that are logically
 * there. `WebGpuOps.beginProfile()` starts a collector; the backend reports each matmul/attention dispatch to it and
 * `endProfile()` returns the totals. Used by `webgguf profile` and by the structural tests of the hardware path.
 */

/** Subgroup width assumed when counting subgroups of a dispatch (most desktop GPUs; lavapipe runs 8). */
export const PROFILE_SUBGROUP_WIDTH = 32;

/** One matrix product as the kernels run it: its dispatch record (less the workgroup size) and what follows from it. */
interface MatmulProfile extends Omit<MatmulRecord, 'wgSize'> {
  /** Subgroups launched, at PROFILE_SUBGROUP_WIDTH lanes each. */
  readonly subgroups: number;
  /** Weight rows one subgroup walks (fractional when several subgroups share a row). */
  readonly rowsPerSubgroup: number;
  /** Invocations per workgroup. */
  readonly lanes: number;
  /** Output rows (× tokens) per workgroup launched. */
  readonly rowsPerWorkgroup: number;
  /** weightBytesLoaded ÷ weightBytesLogical. */
  readonly loadsPerWeightByte: number;
  /** Subgroups per MiB of logical weight bytes (occupancy of a memory-bound GEMV). */
  readonly subgroupsPerMiB: number;
}

/** One step's totals. */
export interface StepProfile {
  readonly tokens: number;
  readonly layers: number;
  readonly dispatches: number;
  readonly dispatchesPerLayer: number;
  readonly submissions: number;
  readonly readbackBytes: number;
  /** Host writes of token ids (0 for a pipelined decode step, whose token the previous argmax wrote on the device). */
  readonly hostTokenWrites: number;
  readonly weightBytesLogical: number;
  readonly weightBytesLoaded: number;
  /** KV cache bytes attention needs (each K/V element of the attended positions once). */
  readonly kvBytes: number;
  /** KV cache bytes attention kernels load. */
  readonly kvBytesRead: number;
  /** Dispatches by pipeline label. */
  readonly kernels: Readonly<Record<string, number>>;
  readonly matmuls: readonly MatmulProfile[];
}

/** A matmul dispatch as reported by the backend. */
export interface MatmulRecord {
  /** Tensor name (for fused products: the names joined with `+`). */
  readonly name: string;
  /** Kernel pipeline label, e.g. `gemv_sg.q4_0.f16.sg.wg64`. */
  readonly kernel: string;
  /** Output rows (weight rows; gate+up counted once per output). */
  readonly rows: number;
  /** Row length (K). */
  readonly cols: number;
  /** Tokens of the step. */
  readonly tokens: number;
  readonly workgroups: number;
  readonly wgSize: number;
  /** Bytes of the weights in the GGUF. */
  readonly weightBytesLogical: number;
  /** Bytes of weights the kernel loads from memory for this step (repacked rows, re-reads per token tile). */
  readonly weightBytesLoaded: number;
  /**
   * Alignment every weight row starts at in its binding, in bytes (the largest power of two ≤ 16 dividing the row
   * stride): 16 lets a row's quants load as aligned vec4 spans on every row.
   */
  readonly rowAlign: number;
}

/** Collects the records of one profiled stretch of work. */
export class ProfileCollector {
  readonly matmuls: MatmulRecord[] = [];
  readonly kernels = new Map<string, number>();
  kvBytes = 0;
  kvBytesRead = 0;

  /** Counts one dispatch of `label`. */
  dispatch(label: string): void {
    this.kernels.set(label, (this.kernels.get(label) ?? 0) + 1);
  }

  matmul(r: MatmulRecord): void {
    this.matmuls.push(r);
  }

  attention(kvBytes: number, kvBytesRead: number): void {
    this.kvBytes += kvBytes;
    this.kvBytesRead += kvBytesRead;
  }

  /** The totals, given the recorder counters over the stretch and the model's layer count. */
  summarize(
    counters: { dispatches: number; submissions: number; bytesRead: number; tokenWrites: number },
    layers: number,
    tokens: number,
  ): StepProfile {
    const matmuls = this.matmuls.map(toMatmulProfile);
    const sum = (f: (m: MatmulProfile) => number): number => matmuls.reduce((a, m) => a + f(m), 0);
    return {
      tokens,
      layers,
      dispatches: counters.dispatches,
      dispatchesPerLayer: layers > 0 ? counters.dispatches / layers : 0,
      submissions: counters.submissions,
      readbackBytes: counters.bytesRead,
      hostTokenWrites: counters.tokenWrites,
      weightBytesLogical: sum((m) => m.weightBytesLogical),
      weightBytesLoaded: sum((m) => m.weightBytesLoaded),
      kvBytes: this.kvBytes,
      kvBytesRead: this.kvBytesRead,
      kernels: Object.fromEntries([...this.kernels].sort((a, b) => b[1] - a[1])),
      matmuls,
    };
  }
}

function toMatmulProfile(r: MatmulRecord): MatmulProfile {
  const subgroups = r.workgroups * Math.max(1, r.wgSize / PROFILE_SUBGROUP_WIDTH);
  return {
    name: r.name,
    kernel: r.kernel,
    rows: r.rows,
    cols: r.cols,
    tokens: r.tokens,
    workgroups: r.workgroups,
    subgroups,
    rowsPerSubgroup: (r.rows * r.tokens) / subgroups,
    lanes: r.wgSize,
    rowsPerWorkgroup: (r.rows * r.tokens) / r.workgroups,
    weightBytesLogical: r.weightBytesLogical,
    weightBytesLoaded: r.weightBytesLoaded,
    rowAlign: r.rowAlign,
    loadsPerWeightByte: r.weightBytesLoaded / Math.max(1, r.weightBytesLogical),
    subgroupsPerMiB: subgroups / Math.max(1e-9, r.weightBytesLogical / 2 ** 20),
  };
}
