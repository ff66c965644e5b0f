/**
 * The random-weight mmproj generators by projector type (`clip.projector_type`): what the reference makers and the
 * tests regenerate a recorded mmproj with.
 */

import { gemma3Mmproj } from './mmproj-gemma3.js';
import { type Idefics3MmprojShape, idefics3Mmproj } from './mmproj-idefics3.js';
import { type Lfm2MmprojShape, lfm2Mmproj } from './mmproj-lfm2.js';
import { type MlpMmprojShape, mlpMmproj } from './mmproj-mlp.js';
import { type Gemma4vMmprojShape, gemma4vMmproj } from './mmproj-gemma4v.js';
import { type LdpMmprojShape, ldpMmproj } from './mmproj-ldp.js';
import { pixtralMmproj } from './mmproj-pixtral.js';
import { type Qwen25vlMmprojShape, qwen25vlMmproj } from './mmproj-qwen25vl.js';
import { type Qwen3vlMmprojShape, qwen3vlMmproj } from './mmproj-qwen3vl.js';
import type { VitShape } from './mmproj-vit.js';

/** A shape of any projector: the trunk's fields plus the projector's own. */
export type MmprojShape = VitShape &
  Partial<Omit<Idefics3MmprojShape, keyof VitShape>> &
  Partial<Omit<Lfm2MmprojShape, keyof VitShape>> &
  Partial<Omit<MlpMmprojShape, keyof VitShape>> &
  Partial<Omit<Gemma4vMmprojShape, keyof VitShape>> &
  Partial<Omit<LdpMmprojShape, keyof VitShape>> &
  Partial<Omit<Qwen25vlMmprojShape, keyof VitShape>> &
  Partial<Omit<Qwen3vlMmprojShape, keyof VitShape>>;

export const MMPROJ_GENERATORS: Readonly<Record<string, (seed: number, shape: MmprojShape) => Uint8Array>> = {
  gemma3: gemma3Mmproj,
  idefics3: (seed, shape) => idefics3Mmproj(seed, { ...shape, longestEdge: shape.longestEdge ?? shape.imageSize }),
  lfm2: (seed, shape) => lfm2Mmproj(seed, { ...shape, projHidden: shape.projHidden ?? shape.nEmbdText }),
  mlp: (seed, shape) => mlpMmproj(seed, { ...shape, projHidden: shape.projHidden ?? shape.nEmbdText }),
  pixtral: (seed, shape) => pixtralMmproj(seed, { ...shape, projHidden: shape.projHidden ?? shape.nEmbdText }),
  gemma4v: (seed, shape) => gemma4vMmproj(seed, { ...shape, posSize: shape.posSize ?? 64 }),
  ldp: (seed, shape) => ldpMmproj(seed, { ...shape, seHidden: shape.seHidden ?? shape.nEmbdText / 4 }),
  'qwen2.5vl_merger': (seed, shape) =>
    qwen25vlMmproj(seed, {
      ...shape,
      projHidden: shape.projHidden ?? shape.nEmbdText,
      windowPattern: shape.windowPattern ?? 0,
    }),
  qwen3vl_merger: (seed, shape) =>
    qwen3vlMmproj(seed, { ...shape, projHidden: shape.projHidden ?? shape.nEmbdText, deepstack: shape.deepstack ?? 0 }),
};
