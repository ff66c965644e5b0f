/**
 * Template × conversation pairs of the llama.cpp corpus that do not render byte-identically, with the reason
 * (mirrored in the README, "Chat templates: conformance with llama.cpp").
 */

const MARKERS =
  "continuing a trailing assistant message writes the template's reasoning markers; llama.cpp's autoparser derives them " +
  'by diffing many renders, ours from the rendered history and the think tags the template writes';

export const KNOWN_DIFFERENCES: Readonly<Record<string, string>> = {
  'Apriel-1.6-15b-Thinker-fixed prefill': `${MARKERS}: Apriel's reasoning is delimited by prose ("Here are my reasoning steps:" … "[BEGIN FINAL RESPONSE]"), which is not a think tag, so its markers are not found here`,
  'Apriel-1.6-15b-Thinker-fixed prefill_reasoning': `${MARKERS}: as above (Apriel's prose markers)`,
  'NVIDIA-Nemotron-Nano-v2 prefill': `${MARKERS}: llama.cpp keeps a newline after <think> ("<think>\\n</think>"), here the tags alone`,
  'NVIDIA-Nemotron-Nano-v2 prefill_reasoning': `${MARKERS}: as above ("<think>\\n" there, "<think>" here)`,
  'llama-cpp-rwkv-world prefill': `${MARKERS}: the same newline after <think> as Nemotron Nano v2`,
};

/** Templates whose reasoning support (the default of `enable_thinking`) is decided differently, with the reason. */
export const KNOWN_THINKING_DIFFERENCES: Readonly<Record<string, string>> = {
  'upstage-Solar-Open-100B':
    "writes <think> tags, which counts as reasoning support here; llama.cpp's autoparser finds none. The template never reads enable_thinking, so no prompt differs.",
};
