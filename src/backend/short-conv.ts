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

/** out = C · conv([state ‖ B·x]) for n rows; then state = the window's last taps − 1 rows (see `Ops.shortConv`). */
export function shortConvRows(a: ShortConvArgs): void {
  const { out, bcx, state, kernel, n, channels: C, taps } = a;
  const d = taps - 1; // state rows
  if (a.fresh) state.fill(0);
  // Window row r (0 … d+n): state row r when r < d, else B·x of token r − d.
  const win = (r: number, c: number): number => {
    if (r < d) return state[r * C + c];
    const row = a.bcxAt + (r - d) * a.bcxStride;
    return Math.fround(bcx[row + c] * bcx[row + 2 * C + c]);
  };
  for (let i = 0; i < n; i++) {
    const o = a.outAt + i * a.outStride;
    const cRow = a.bcxAt + i * a.bcxStride + C;
    for (let c = 0; c < C; c++) {
      const kr = a.kernelAt + c * taps;
      let sum = 0;
      for (let k = 0; k < taps; k++) sum += kernel[kr + k] * win(i + k, c);
      out[o + c] = Math.fround(bcx[cRow + c] * Math.fround(sum));
    }
  }
  // New state: window rows n … n + d − 1 (rows of the old state first when n < d, read before they are overwritten).
  for (let r = 0; r < d; r++) {
    const src = n + r;
    for (let c = 0; c < C; c++) state[r * C + c] = win(src, c);
  }
}

/** Recurrent state of every slot and layer in host memory (CPU and WASM backends). */
export class HostRecurrentState {
  private spec: RecurrentStateSpec | null = null;
  private slots: Float32Array[][] = []; // [nSlots][nLayers] → [layerSizes[l]]

  create(spec: RecurrentStateSpec): void {
    this.spec = spec;
    this.slots = Array.from({ length: spec.nSlots }, () => spec.layerSizes.map((size) => new Float32Array(size)));
  }

  /** The state of `layer` in `slot`: [layerSizes[layer]] f32. */
  layer(slot: number, layer: number, size: number): Float32Array {
    const s = this.slots[slot]?.[layer];
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
    const s = this.slots[slot];
    if (!this.spec || !s) {
      throw new LlmError('invalid-request', `recurrent state of slot ${slot} is not allocated`, { details: { slot } });
    }
    return s;
  }
}
