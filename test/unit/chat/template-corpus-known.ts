/**
 * Template × conversation pairs of the llama.cpp corpus that do not render byte-identically, with the reason
 * (mirrored in the README, "Chat templates: conformance with llama.cpp").
 */
export const KNOWN_DIFFERENCES: Readonly<Record<string, string>> = {};
