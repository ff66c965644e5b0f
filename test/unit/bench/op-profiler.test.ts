/**
 * The bench's op profiler charges a mixture-of-experts FFN (`Ops.moeFfn`, whose inner ops the wrapper cannot see) to
 * one 'moe ffn' kind instead of leaving it in 'js/other'.
 */

import { describe, expect, it } from 'vitest';
import type { Ops } from '../../../src/backend/ops.js';
import { breakdownPerToken, profileOps } from '../../bench/op-profiler.js';

describe('op profiler', () => {
  it('times moeFfn as its own kind', () => {
    let calls = 0;
    const busy = (): void => {
      calls++;
    };
    const fake = { moeFfn: busy, name: 'fake' } as unknown as Ops;
    const { ops, profile } = profileOps(fake);
    profile.enabled = true;
    (ops.moeFfn as (...a: unknown[]) => void)();
    profile.enabled = false;
    expect(calls).toBe(1);
    expect(profile.calls.get('moe ffn')).toBe(1);
    const b = breakdownPerToken(profile, 1, profile.ms.get('moe ffn')!);
    expect(Object.keys(b)).toEqual(['moe ffn', 'js/other']);
    expect(b['js/other']).toBe(0); // the whole step's time is the MoE call's
  });
});
