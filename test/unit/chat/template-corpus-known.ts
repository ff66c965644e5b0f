/**
 * Template × conversation pairs of the llama.cpp corpus that do not render byte-identically, with the reason
 * (mirrored in the README, "Chat templates: conformance with llama.cpp").
 */
export const KNOWN_DIFFERENCES: Readonly<Record<string, string>> = {};

/** Templates whose reasoning support (the default of `enable_thinking`) is decided differently, with the reason. */
export const KNOWN_THINKING_DIFFERENCES: Readonly<Record<string, string>> = {
  'upstage-Solar-Open-100B':
    "writes <think> tags, which counts as reasoning support here; llama.cpp's autoparser finds none. The template never reads enable_thinking, so no prompt differs.",
};
