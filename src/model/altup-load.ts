/**
 * Loading gemma3n's AltUp and LAuReL weights (llama.cpp names): the model-wide stream projections `altup_proj` and
 * `altup_unembd_proj` (3-D stacks [nEmbd, nEmbd, nInputs − 1], uploaded one matrix per stream) and each layer's
 * router, prediction / correction coefficients and low-rank residual. Shapes are checked before any read.
 */

import type { AltUpConfig } from './altup-config.js';
import type { AltUpLayerWeights, AltUpWeights } from './altup.js';
import type { ModelConfig } from './config.js';
import type { WeightLoader, WeightSlot } from './weight-loader.js';

/** Rank of the LAuReL residual (llama.cpp `laurel_rank`, fixed). */
const LAUREL_RANK = 64;

/** The AltUp weights' slots, named now (filled by `loader.loadAll`). */
export interface AltUpSlots {
  readonly proj: WeightSlot[];
  readonly unembd: WeightSlot[];
  readonly layers: { readonly [K in keyof AltUpLayerWeights]: WeightSlot }[];
}

/** Names every AltUp / LAuReL tensor of a model of config `c` with `a` = c.altup. */
export function nameAltUpWeights(loader: WeightLoader, c: ModelConfig, a: AltUpConfig): AltUpSlots {
  const E = c.embeddingLength;
  const N = a.nInputs;
  const stack = (name: string): WeightSlot[] =>
    loader.uploadSplit(
      name,
      E,
      Array.from({ length: N - 1 }, (_, i) => [`${name}[${i}]`, E] as const),
      [E, E, N - 1],
    );
  return {
    proj: stack('altup_proj.weight'),
    unembd: stack('altup_unembd_proj.weight'),
    layers: Array.from({ length: c.nLayers }, (_, il) => {
      const t = (suffix: string, shape: readonly number[]): WeightSlot => loader.upload(`blk.${il}.${suffix}`, shape);
      return {
        routerNorm: t('altup_router_norm.weight', [E]),
        router: t('altup_router.weight', [E, N]),
        predictCoef: t('altup_predict_coef.weight', [N, N * N]),
        correctCoef: t('altup_correct_coef.weight', [N, N]),
        correctScale: t('altup_correct_scale.weight', [E]),
        laurelL: t('laurel_l.weight', [E, LAUREL_RANK]),
        laurelR: t('laurel_r.weight', [LAUREL_RANK, E]),
        laurelPostNorm: t('laurel_post_norm.weight', [E]),
      };
    }),
  };
}

/** The weights once every slot is filled. */
export function altUpWeightsOf(s: AltUpSlots): AltUpWeights {
  return {
    proj: s.proj.map((w) => w.get()),
    unembd: s.unembd.map((w) => w.get()),
    layers: s.layers.map((l) => ({
      routerNorm: l.routerNorm.get(),
      router: l.router.get(),
      predictCoef: l.predictCoef.get(),
      correctCoef: l.correctCoef.get(),
      correctScale: l.correctScale.get(),
      laurelL: l.laurelL.get(),
      laurelR: l.laurelR.get(),
      laurelPostNorm: l.laurelPostNorm.get(),
    })),
  };
}

/** Label and width of each buffer `AltUp` takes (for the activation plan). */
export function altUpActivations(c: ModelConfig): { key: string; cols: number }[] {
  const a = c.altup;
  if (!a) return [];
  const E = c.embeddingLength;
  const N = a.nInputs;
  return [
    ...Array.from({ length: N }, (_, i) => ({ key: `altup_s:${i}`, cols: E })),
    ...Array.from({ length: N }, (_, i) => ({ key: `altup_p:${i}`, cols: E })),
    { key: 'altup_mod', cols: N },
    { key: 'altup_coef', cols: N * N },
    { key: 'altup_ccoef', cols: N },
    { key: 'altup_r', cols: E },
    { key: 'altup_d', cols: E },
    { key: 'laurel_n', cols: E },
    { key: 'laurel_a', cols: LAUREL_RANK },
    { key: 'laurel_out', cols: E },
  ];
}
