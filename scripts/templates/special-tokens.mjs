// BOS / EOS texts the corpus renders each template with (the model family's tokens; both renderers get the same).
const FAMILIES = [
  [/llama-3|Llama-3|firefunction|Hermes-2-Pro|Hermes-3|functionary|R1-Distill-Llama/, '<|begin_of_text|>', '<|eot_id|>'],
  [/gemma/, '<bos>', '<eos>'],
  [/deepseek|DeepSeek/, '<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>'],
  [/Qwen|QwQ|MiMo|StepFun|MiniCPM|Bielik|SmolLM|Nemotron-3/, '', '<|im_end|>'],
  [/GLM/, '[gMASK]<sop>', '<|endoftext|>'],
  [/gpt-oss|muse-glimmer/, '<|startoftext|>', '<|return|>'],
  [/Phi-3/, '<s>', '<|endoftext|>'],
];

/** @param {string} name @param {string} _text */
export function specialTokensFor(name, _text) {
  for (const [re, bos, eos] of FAMILIES) if (re.test(name)) return { bos, eos };
  return { bos: '<s>', eos: '</s>' };
}
