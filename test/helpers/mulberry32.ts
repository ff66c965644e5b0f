/**
 * mulberry32: the tiny deterministic PRNG the tests draw their fuzz cases and synthetic inputs from — the one stream
 * of scripts/deterministic-random.mjs that the synthetic models and golden quant vectors use too. Test-only: the
 * library's sampling RNG is `src/engine/rng.ts`.
 */

export { mulberry32 } from '../../scripts/deterministic-random.mjs';
