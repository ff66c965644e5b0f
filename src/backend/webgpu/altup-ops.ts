/**
 * gemma3n's AltUp and activation-sparsity primitives on WebGPU (`altup` kernel), each one dispatch inside the step's
 * submission: per-row weighted adds (AltUp predict / correct), magnitude matching (the extra streams), gaussian
 * top-k (the sparse FFN gate) and a vector product (`altup_correct_scale`).
 */

import { LlmError } from '../../errors.js';
import type { AltUpPrimitives } from '../altup-primitives.js';
import type { Activation, Weight } from '../ops.js';
import type { ActivationOpsHost } from './activation-ops.js';
import type { GpuActivation, GpuWeight } from './gpu-resources.js';
import { grid, type ParamsWriter } from './step-recorder.js';

const WG_FLAT = 256; // elementwise
const WG_ROW = 64; // one workgroup per row

type Host = Pick<ActivationOpsHost, 'rec' | 'pipe'>;

/** See the file header. */
export class AltUpOps implements AltUpPrimitives {
  constructor(private readonly h: Host) {}

  addScaledRows(out: Activation, y: Activation, coef: Activation, col: number, bias: number, n: number): void {
    const [o, ya, c] = [out, y, coef] as GpuActivation[];
    distinct('addScaledRows', o, ya);
    distinct('addScaledRows', o, c);
    const params = (p: ParamsWriter): void => {
      p.u(n).u(o.cols).u(ya.cols).u(c.cols).u(col).f(bias).f(0).u(0);
    };
    const pipe = this.h.pipe({ kernel: 'altup', wgSize: WG_FLAT });
    this.h.rec.dispatch(pipe, [null, o.buffer, ya.buffer, c.buffer], params, grid(Math.ceil((n * o.cols) / WG_FLAT)));
  }

  mulVector(x: Activation, w: Weight, n: number): void {
    const xa = x as GpuActivation;
    const gw = w as GpuWeight;
    const vector = gw.vector ?? gw.parts[0]!.buffer;
    const params = (p: ParamsWriter): void => {
      p.u(n).u(xa.cols).u(0).u(0).u(0).f(0).f(0).u(0);
    };
    const pipe = this.h.pipe({ kernel: 'altup', entry: 'mul_vector', wgSize: WG_FLAT });
    this.h.rec.dispatch(pipe, [null, xa.buffer, null, vector], params, grid(Math.ceil((n * xa.cols) / WG_FLAT)));
  }

  matchMagnitude(x: Activation, target: Activation, n: number): void {
    const [xa, t] = [x, target] as GpuActivation[];
    distinct('matchMagnitude', xa, t);
    const params = (p: ParamsWriter): void => {
      p.u(n).u(xa.cols).u(t.cols).u(0).u(0).f(0).f(0).u(0);
    };
    const pipe = this.h.pipe({ kernel: 'altup', entry: 'match_mag', wgSize: WG_ROW });
    this.h.rec.dispatch(pipe, [null, xa.buffer, t.buffer, null], params, [1, n, 1]);
  }

  gaussianTopK(x: Activation, z: number, n: number): void {
    const xa = x as GpuActivation;
    const params = (p: ParamsWriter): void => {
      p.u(n).u(xa.cols).u(0).u(0).u(0).f(0).f(z).u(0);
    };
    const pipe = this.h.pipe({ kernel: 'altup', entry: 'gauss_topk', wgSize: WG_ROW });
    this.h.rec.dispatch(pipe, [null, xa.buffer, null, null], params, [1, n, 1]);
  }
}

/** WebGPU forbids a writable binding aliasing another: the ops' buffers must differ. */
function distinct(op: string, a: GpuActivation, b: GpuActivation): void {
  if (a.buffer === b.buffer) throw new LlmError('invalid-request', `${op}: its output may not alias an input`);
}
