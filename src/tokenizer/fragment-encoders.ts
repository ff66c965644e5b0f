/**
 * The encoders of the rarer vocabulary types — WordPiece (`bert`), SentencePiece unigram (`t5`), RWKV and PLaMo-2 —
 * keyed by vocabulary type, and the rarer BPE pre-tokenizers (rare-pre-tokenizers.ts). A chunk of its own in the
 * browser builds: a chat model with a common SPM or BPE vocabulary never fetches it; `loadFragmentEncoders`
 * (fragment-encoder-registry.ts) imports it for a vocabulary that needs it.
 */

import { Plamo2Encoder } from './plamo2.js';
export { installRarePreTokenizers } from './rare-pre-tokenizers.js';
import { RwkvEncoder } from './rwkv.js';
import type { FragmentEncoder, LazyVocabType } from './fragment-encoder-registry.js';
import { UgmEncoder } from './ugm.js';
import type { Vocab } from './vocab.js';
import { WpmEncoder } from './wpm.js';

/** One constructor per lazily loaded vocabulary type. */
export const FRAGMENT_ENCODERS: Readonly<Record<LazyVocabType, (vocab: Vocab) => FragmentEncoder>> = {
  wpm: (vocab) => new WpmEncoder(vocab),
  ugm: (vocab) => new UgmEncoder(vocab),
  rwkv: (vocab) => new RwkvEncoder(vocab),
  plamo2: (vocab) => new Plamo2Encoder(vocab),
};
