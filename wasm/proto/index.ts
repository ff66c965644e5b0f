/**
 * Prototype module (not part of the shipped kernels; scripts/build-wasm.mjs never builds it): the shipped kernels
 * plus experimental ones, compiled at bench time by test/bench/rows4-proto.bench.ts for a same-process comparison.
 */
export * from '../assembly/index';
export { gemv_q4_0_rows4, gemv_q4_0_rows4_one } from './gemv-q4-0-rows4';
