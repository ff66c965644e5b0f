// FFI bindings (koffi) to node-llama-cpp's prebuilt native libraries, for the dev-only oracle scripts:
// libggml-base's row (de)quantizers and f16/bf16 converters, and libllama's llama_model_quantize (GGUF → other type).
// Paths are resolved inside this package's node_modules/@node-llama-cpp/<platform>/bins.

import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import koffi from 'koffi';

/** Folder holding the prebuilt libggml-base/libllama for this platform (CPU build). */
export function nativeBinDir() {
  const platform = `${process.platform}-${process.arch}`;
  const here = dirname(fileURLToPath(import.meta.url));
  const dir = join(here, 'node_modules', '@node-llama-cpp', platform, 'bins', platform);
  if (!existsSync(dir)) throw new Error(`oracle: no prebuilt binaries at ${dir}`);
  return dir;
}

function findLib(dir, prefix) {
  const hit = readdirSync(dir).find((f) => f.startsWith(prefix) && /\.so|\.dylib|\.dll/.test(f));
  if (!hit) throw new Error(`oracle: ${prefix}* not found in ${dir}`);
  return join(dir, hit);
}

/** libggml-base row functions. Typed arrays are passed as raw pointers. */
export function loadGgmlBase() {
  const lib = koffi.load(findLib(nativeBinDir(), 'libggml-base'));
  const cache = new Map();
  const fn = (name) => {
    if (!cache.has(name)) cache.set(name, lib.func(`void ${name}(const void *x, void *y, int64_t k)`));
    return cache.get(name);
  };
  const has = (name) => {
    try {
      fn(name);
      return true;
    } catch {
      return false;
    }
  };
  return {
    dequantizeRow: (sym, src, dst, k) => fn(`dequantize_row_${sym}`)(src, dst, k),
    quantizeRowRef: (sym, src, dst, k) => fn(`quantize_row_${sym}_ref`)(src, dst, k),
    hasQuantizeRef: (sym) => has(`quantize_row_${sym}_ref`),
    fp16ToFp32Row: (src, dst, k) => fn('ggml_fp16_to_fp32_row')(src, dst, k),
    fp32ToFp16Row: (src, dst, k) => fn('ggml_fp32_to_fp16_row')(src, dst, k),
    bf16ToFp32Row: (src, dst, k) => fn('ggml_bf16_to_fp32_row')(src, dst, k),
    fp32ToBf16RowRef: (src, dst, k) => fn('ggml_fp32_to_bf16_row_ref')(src, dst, k),
  };
}
