/**
 * Token texts llama.cpp recognises in a vocabulary when the file does not mark them (llama-vocab.cpp): the
 * end-of-generation and end-of-turn texts and the fill-in-the-middle tokens. Data only; `vocab.ts` applies it.
 */

/** Texts that mark a token as end-of-generation (llama.cpp's list; matched against the vocabulary). */
export const EOG_TEXTS = new Set([
  '<|eot_id|>',
  '<|im_end|>',
  '<|end|>',
  '<|return|>',
  '<|call|>',
  '<|flush|>',
  '<|calls|>',
  '<end_of_turn>',
  '<|endoftext|>',
  '</s>',
  '<|eom_id|>',
  '<EOT>',
  '_<EOT>',
  '[EOT]',
  '[EOS]',
  '<|end_of_text|>',
  '<end_of_utterance>',
  '<eos>',
  '<turn|>',
  '<|tool_response>',
  '<｜end▁of▁sentence｜>',
  '[e~[',
]);
/** Texts llama.cpp takes as the EOT token when the file names none. */
export const EOT_TEXTS = new Set([
  '<|eot_id|>',
  '<|im_end|>',
  '<|end|>',
  '<end_of_turn>',
  '<|endoftext|>',
  '<|end_of_text|>',
  '<EOT>',
  '_<EOT>',
  '[EOT]',
  '<｜end▁of▁sentence｜>',
  '<end_of_utterance>',
]);
/** FIM tokens that llama.cpp makes CONTROL and end-of-generation when present. */
export const FIM_EOG_TEXTS: ReadonlyArray<[key: string, texts: readonly string[]]> = [
  ['tokenizer.ggml.fim_pad_token_id', ['<|fim_pad|>', '<fim-pad>', '<fim_pad>', '<PAD>', '[PAD]']],
  ['tokenizer.ggml.fim_rep_token_id', ['<|fim_repo|>', '<|repo_name|>', '<fim-repo>', '<REPO>', '<reponame>']],
  ['tokenizer.ggml.fim_sep_token_id', ['<|file_sep|>']],
];
/** FIM prefix/suffix/middle tokens that llama.cpp makes CONTROL when the file names none (keys incl. deprecated). */
export const FIM_CONTROL_TEXTS: ReadonlyArray<[keys: readonly string[], texts: readonly string[]]> = [
  [
    ['tokenizer.ggml.fim_pre_token_id', 'tokenizer.ggml.prefix_token_id'],
    [
      '<|fim_prefix|>',
      '<fim-prefix>',
      '<fim_prefix>',
      '<｜fim▁begin｜>',
      '<PRE>',
      '▁<PRE>',
      '<|code_prefix|>',
      '<|prefix|>',
    ],
  ],
  [
    ['tokenizer.ggml.fim_suf_token_id', 'tokenizer.ggml.suffix_token_id'],
    [
      '<|fim_suffix|>',
      '<fim-suffix>',
      '<fim_suffix>',
      '<｜fim▁hole｜>',
      '<SUF>',
      '▁<SUF>',
      '<|code_suffix|>',
      '<|suffix|>',
    ],
  ],
  [
    ['tokenizer.ggml.fim_mid_token_id', 'tokenizer.ggml.middle_token_id'],
    [
      '<|fim_middle|>',
      '<fim-middle>',
      '<fim_middle>',
      '<｜fim▁end｜>',
      '<MID>',
      '▁<MID>',
      '<|code_middle|>',
      '<|middle|>',
    ],
  ],
];
