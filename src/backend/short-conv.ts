/**
 * The short gated convolution of lfm2 over plain f32 arrays (`Ops.shortConv`), and the host-side recurrent state the
 * CPU and WASM backends keep per sequence slot. The convolution is parallel over tokens: row i of the output only
 * reads window rows i … i + taps − 1, so a prefill of n tokens needs no token-by-token recurrence; the state update
 * afterwards keeps the window's last taps − 1 rows.
 */

import { LlmError } from '../errors.js';
import type { RecurrentStateSpec } from './ops.js';

/** Where one call of `shortConvRows` reads and writes (f32 indices into the arrays given). */
export interface ShortConvArgs {
  /** [n, outStride] output, C columns used. */
  readonly out: Float32Array;
  readonly outAt: number;
  readonly outStride: number;
  /** [n, bcxStride] in_proj output: B (columns 0 … C), C (C … 2C), x (2C … 3C). */
  readonly bcx: Float32Array;
  readonly bcxAt: number;
  readonly bcxStride: number;
  /** [taps − 1, C] state of this layer in this slot, updated in place. */
  readonly state: Float32Array;
  /** [C, taps] depthwise kernel (ggml [taps, C]). */
  readonly kernel: Float32Array;
  readonly kernelAt: number;
  readonly n: number;
  readonly channels: number;
  readonly taps: number;
  /** The sequence starts here: the old state reads as zeros. */
  readonly fresh: boolean;
}

/** [taps − 1 + n] f32: one channel's window, shared by every call (single-threaded, never re-entered). */
let windowScratch = new Float32Array(64);

/** out = C · conv([state ‖ B·x]) for n rows; then state = the window's last taps − 1 rows (see `Ops.shortConv`). */
export function shortConvRows(a: ShortConvArgs): void {
  const { out, bcx, state, kernel, n, channels: C, taps } = a;
  const d = taps - 1; // state rows
  if (a.fresh) state.fill(0);
  if (windowScratch.length < d + n) windowScratch = new Float32Array(d + n); // grows once: decode allocates nothing
  const win = windowScratch; // one channel's window [state ‖ B·x], f32 as ggml's mul
  for (let c = 0; c < C; c++) {
    for (let r = 0; r < d; r++) win[r] = state[r * C + c];
    for (let i = 0; i < n; i++) {
      const row = a.bcxAt + i * a.bcxStride;
      win[d + i] = bcx[row + c] * bcx[row + 2 * C + c];
    }
    const kr = a.kernelAt + c * taps;
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let k = 0; k < taps; k++) sum += kernel[kr + k] * win[i + k];
      out[a.outAt + i * a.outStride + c] = Math.fround(bcx[a.bcxAt + i * a.bcxStride + C + c] * Math.fround(sum));
    }
    for (let r = 0; r < d; r++) state[r * C + c] = win[n + r]; // the window's last d rows
  }
}

/** Recurrent state of every slot and layer in host memory (CPU and WASM backends). */
export class HostRecurrentState {
  private spec: RecurrentStateSpec | null = null;
  private arrays: (() => Float32Array)[][] = []; // [nSlots][nLayers] → [layerSizes[l]]

  /** `place` puts one state array where the backend's kernels read it (default: a plain Float32Array). */
  constructor(
    private readonly place: (size: number, what: string) => () => Float32Array = (size) => {
      const a = new Float32Array(size);
      return () => a;
    },
  ) {}

  create(spec: RecurrentStateSpec): void {
    this.spec = spec;
    this.arrays = Array.from({ length: spec.nSlots }, (_, s) =>
      spec.layerSizes.map((size, l) => this.place(size, `recurrent state of layer ${l} in slot ${s}`)),
    );
  }

  /** The state of `layer` in `slot`: [layerSizes[layer]] f32. */
  layer(slot: number, layer: number, size: number): Float32Array {
    const s = this.arrays[slot]?.[layer]?.();
    if (!s || s.length !== size) {
      throw new LlmError(
        'invalid-request',
        `recurrent state of layer ${layer} in slot ${slot}: ${s ? `${s.length} values, ${size} asked` : 'not allocated'}`,
        { details: { slot, layer, size } },
      );
    }
    return s;
  }

  copy(src: number, dst: number): void {
    const from = this.slotOf(src);
    const to = this.slotOf(dst);
    if (src !== dst) for (let l = 0; l < from.length; l++) to[l].set(from[l]);
  }

  read(slot: number): Float32Array {
    const layers = this.slotOf(slot);
    const out = new Float32Array(layers.reduce((s, l) => s + l.length, 0)); // [Σ layerSizes]
    let at = 0;
    for (const l of layers) {
      out.set(l, at);
      at += l.length;
    }
    return out;
  }

  write(slot: number, state: Float32Array): void {
    const layers = this.slotOf(slot);
    const total = layers.reduce((s, l) => s + l.length, 0);
    if (state.length !== total) {
      throw new LlmError(
        'invalid-request',
        `recurrent state of slot ${slot}: ${state.length} values, ${total} expected`,
        {
          details: { slot, values: state.length, expected: total },
        },
      );
    }
    let at = 0;
    for (const l of layers) {
      l.set(state.subarray(at, at + l.length));
      at += l.length;
    }
  }

  private slotOf(slot: number): Float32Array[] {
    const s = this.arrays[slot];
    if (!this.spec || !s) {
      throw new LlmError('invalid-request', `recurrent state of slot ${slot} is not allocated`, { details: { slot } });
    }
    return s.map((get) => get());
  }
}
