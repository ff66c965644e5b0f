/** The WASM backend's activation buffers: an f32 matrix at a byte offset of the heap. */

import type { Activation } from '../ops.js';

/** An f32 activation [maxRows, cols] in WASM memory. */
export interface WasmActivation extends Activation {
  readonly byteOffset: number;
  /** Bumped by every op that writes it (keys the Q8 cache). */
  version: number;
}

/** `a` as the WASM backend's activation (every activation it is given is one it created). */
export function act(a: Activation): WasmActivation {
  return a as WasmActivation;
}
