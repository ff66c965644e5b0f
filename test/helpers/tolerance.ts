/**
 * The one tolerance table of the conformance tests. The reference backend's limits are defined once in
 * src/model/conformance.ts (`referenceTolerances`, also used by `webgguf conform`); other backends pass an override
 * that adds their own activation rounding (stated in their test file).
 */

import { referenceTolerances, type Tolerances, type WeightClass } from '../../src/model/conformance.js';

export type { Tolerances, WeightClass };

/** A backend's adjustment: fixed numbers, or a function of the reference limits and the fixture. */
export type ToleranceOverride =
  | Partial<Tolerances>
  | ((
      base: Tolerances,
      fixture: { readonly weights: WeightClass; readonly arch: string; readonly id: string },
    ) => Tolerances);

/** Limits for one fixture: the reference table with `override` applied. */
export function tolerancesFor(
  fixture: { readonly weights: WeightClass; readonly arch: string; readonly id: string },
  override?: ToleranceOverride,
): Tolerances {
  const base = referenceTolerances(fixture.weights, fixture.arch);
  if (!override) return base;
  return typeof override === 'function' ? override(base, fixture) : { ...base, ...override };
}

/**
 * The limits the issue sets for backends other than the reference: 2e-2 vs the dequantized-F32 rows plus
 * `extraRounding` (the backend's own activation rounding), same F32-KV table.
 */
export function backendTolerances(extraRounding: number): ToleranceOverride {
  return (base) => ({ ...base, dequantF32: Math.max(base.dequantF32, 2e-2) + extraRounding });
}
