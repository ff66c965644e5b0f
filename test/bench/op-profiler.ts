/**
 * A timing wrapper around any `Ops` backend: every call goes through to the real backend and its wall time is added
 * to a per-kind total, so one decode step can be split into matmul (attention / FFN / output), other ops and the
 * JS left between calls. Exact for synchronous backends (WASM, CPU); for WebGPU it only measures encode time, unless
 * a GPU timer (src/backend/webgpu/gpu-timer.ts) is passed: each call then names the op kind its dispatches are charged to.
 */

import type { Ops, Weight } from '../../src/backend/ops.js';

/** Milliseconds per op kind, accumulated while `enabled`. */
export interface OpProfile {
  /** Kind → total ms (e.g. 'matmul ffn', 'attention', 'rmsNorm'). */
  readonly ms: Map<string, number>;
  /** Kind → number of calls. */
  readonly calls: Map<string, number>;
  /** Turns accumulation on/off (off by default, so loading and warm-up are not counted). */
  enabled: boolean;
  /** Clears the totals. */
  reset(): void;
}

/** Splits matmuls by what the weight is, from its GGUF tensor name. */
function matmulKind(w: Weight): string {
  const n = w.name;
  if (n === 'output.weight' || n === 'token_embd.weight') return 'matmul output';
  if (/attn_(q|k|v|qkv|output)\b/.test(n) || /attn_(q|k|v|qkv|output)\./.test(n)) return 'matmul attn';
  if (/ffn_/.test(n)) return 'matmul ffn';
  return 'matmul other';
}

/**
 * Methods that run work (timed); the rest (name, description, createActivation, …) pass through untimed. Includes
 * the compound steps (normMatmul, matmulResidual, gatedFfn, ropeStoreKv, moeFfn) and WebGPU's own fused kernels.
 */
const TIMED = new Set<string>([
  'embed',
  'rmsNorm',
  'matmul',
  'rope',
  'storeKv',
  'attention',
  'glu',
  'add',
  'scale',
  'softcap',
  'copyRows',
  'beginStep',
  'endStep',
  'read',
  'argmax',
  'topK',
  'copyKv',
  'matmulFused',
  'matmulGlu',
  'ropeStoreKv',
  'normMatmul',
  'matmulResidual',
  'gatedFfn',
  'shortConv',
  'deltaNet',
  'splitHeadPairs',
  'mulSigmoid',
  'moeFfn',
]);

/**
 * The op kind of a call. Fused matmuls are charged to their matmul kind (the folded norm / residual add / GLU
 * included), so reports stay comparable between backends that fuse and those that do not.
 */
function opKind(prop: string, args: readonly unknown[]): string {
  if (prop === 'matmul' || prop === 'matmulFused' || prop === 'matmulGlu') return matmulKind(args[2] as Weight);
  if (prop === 'normMatmul') return matmulKind((args[3] as readonly { weight: Weight }[])[0]!.weight);
  if (prop === 'gatedFfn') return matmulKind(args[3] as Weight);
  if (prop === 'matmulResidual') return matmulKind(args[2] as Weight);
  if (prop === 'ropeStoreKv') return 'rope+storeKv';
  // A MoE layer's whole FFN (norm, router, routing, expert matmuls, GLU, weighted sum, shared expert): one kind.
  if (prop === 'moeFfn') return 'moe ffn';
  return prop;
}

/** The part of a GPU timer the profiler drives: the op kind that dispatches recorded now are charged to. */
export interface OpScopeSink {
  scope: string | null;
}

/**
 * Wraps `ops` so each timed call adds its duration to `profile`. Async methods (read, argmax, topK) are timed to the
 * settlement of their promise. With `gpuTimer`, while profiling, each call sets `gpuTimer.scope` to its op kind for
 * the synchronous part of the call (when WebGPU records its dispatches).
 */
export function profileOps(ops: Ops, gpuTimer?: OpScopeSink | null): { ops: Ops; profile: OpProfile } {
  const ms = new Map<string, number>();
  const calls = new Map<string, number>();
  const profile: OpProfile = {
    ms,
    calls,
    enabled: false,
    reset() {
      ms.clear();
      calls.clear();
    },
  };
  const add = (kind: string, dt: number): void => {
    ms.set(kind, (ms.get(kind) ?? 0) + dt);
    calls.set(kind, (calls.get(kind) ?? 0) + 1);
  };
  const wrapped = new Proxy(ops, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function' || typeof prop !== 'string' || !TIMED.has(prop)) {
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      }
      const fn = value as (...a: unknown[]) => unknown;
      return (...args: unknown[]): unknown => {
        if (!profile.enabled) return fn.apply(target, args);
        const kind = opKind(prop, args);
        const t0 = performance.now();
        const outer = gpuTimer ? gpuTimer.scope : null;
        if (gpuTimer) gpuTimer.scope = kind;
        let r: unknown;
        try {
          r = fn.apply(target, args);
        } finally {
          if (gpuTimer) gpuTimer.scope = outer;
        }
        if (r instanceof Promise) {
          return r.then((v: unknown) => {
            add(kind, performance.now() - t0);
            return v;
          });
        }
        add(kind, performance.now() - t0);
        return r;
      };
    },
  });
  return { ops: wrapped, profile };
}

/**
 * Per-token breakdown from a profile over `steps` decode steps that took `totalMs` in all: ms per token for each kind,
 * plus 'js/other' for the time no op accounts for (model code, promise turns, sampling glue).
 */
export function breakdownPerToken(profile: OpProfile, steps: number, totalMs: number): Record<string, number> {
  const out: Record<string, number> = {};
  let sum = 0;
  const kinds = [...profile.ms].sort((a, b) => b[1] - a[1]);
  for (const [kind, t] of kinds) {
    out[kind] = round(t / steps, 3);
    sum += t;
  }
  out['js/other'] = round(Math.max(0, totalMs - sum) / steps, 3);
  return out;
}

/**
 * Per-token breakdown from GPU timestamps over `steps` steps that took `totalMs` of wall time: GPU ms per op kind,
 * 'gpu gaps' (between timed passes within a submission) and 'host/wait (GPU idle)' for the rest of the wall time.
 */
export function gpuBreakdownPerToken(
  byKind: ReadonlyMap<string, number>,
  spanMs: number,
  steps: number,
  totalMs: number,
): Record<string, number> {
  const out: Record<string, number> = {};
  let busy = 0;
  for (const [kind, t] of [...byKind].sort((a, b) => b[1] - a[1])) {
    out[kind] = round(t / steps, 3);
    busy += t;
  }
  out['gpu gaps'] = round(Math.max(0, spanMs - busy) / steps, 3);
  out['host/wait (GPU idle)'] = round(Math.max(0, totalMs - Math.max(spanMs, busy)) / steps, 3);
  return out;
}

function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
