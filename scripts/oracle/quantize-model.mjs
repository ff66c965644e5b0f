#!/usr/bin/env node
// llama.cpp's own model quantizer (`llama_model_quantize` in node-llama-cpp's prebuilt libllama, through koffi):
// re-types a GGUF offline, e.g. to ALL_F32 (the dequant_f32 reference copy) or to Q4_K_M for a realistic mix.
// Usage: node scripts/oracle/quantize-model.mjs <in.gguf> <out.gguf> <ftype> [--pure] [--threads N]
//   ftype: a llama_ftype name without the prefix (ALL_F32, MOSTLY_F16, MOSTLY_Q4_0, MOSTLY_Q4_K_M, …) or its number.
// Run it in its own process: it loads libllama next to (not through) node-llama-cpp's addon.

import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import koffi from 'koffi';
import { nativeBinDir } from './ggml-lib.mjs';

/** llama_ftype values (include/llama.h of the bundled llama.cpp). */
export const LLAMA_FTYPES = {
  ALL_F32: 0,
  MOSTLY_F16: 1,
  MOSTLY_Q4_0: 2,
  MOSTLY_Q4_1: 3,
  MOSTLY_Q8_0: 7,
  MOSTLY_Q5_0: 8,
  MOSTLY_Q5_1: 9,
  MOSTLY_Q2_K: 10,
  MOSTLY_Q3_K_S: 11,
  MOSTLY_Q3_K_M: 12,
  MOSTLY_Q3_K_L: 13,
  MOSTLY_Q4_K_S: 14,
  MOSTLY_Q4_K_M: 15,
  MOSTLY_Q5_K_S: 16,
  MOSTLY_Q5_K_M: 17,
  MOSTLY_Q6_K: 18,
  MOSTLY_IQ2_XXS: 19,
  MOSTLY_IQ2_XS: 20,
  MOSTLY_Q2_K_S: 21,
  MOSTLY_IQ3_XS: 22,
  MOSTLY_IQ3_XXS: 23,
  MOSTLY_IQ1_S: 24,
  MOSTLY_IQ4_NL: 25,
  MOSTLY_IQ3_S: 26,
  MOSTLY_IQ3_M: 27,
  MOSTLY_IQ2_S: 28,
  MOSTLY_IQ2_M: 29,
  MOSTLY_IQ4_XS: 30,
  MOSTLY_IQ1_M: 31,
  MOSTLY_BF16: 32,
  MOSTLY_MXFP4_MOE: 38,
};

let api;
function loadLlama() {
  if (api) return api;
  const dir = nativeBinDir();
  const file = readdirSync(dir).find((f) =>
    /^libllama\.v[\d.]+\.so$|^libllama\.so$|^libllama.*\.dylib$|^llama.*\.dll$/.test(f),
  );
  if (!file) throw new Error(`oracle: libllama not found in ${dir}`);
  const lib = koffi.load(join(dir, file));
  koffi.struct('llama_model_quantize_params', {
    // registers the type named in the signatures below
    nthread: 'int32_t',
    ftype: 'int32_t',
    output_tensor_type: 'int32_t',
    token_embedding_type: 'int32_t',
    allow_requantize: 'bool',
    quantize_output_tensor: 'bool',
    only_copy: 'bool',
    pure: 'bool',
    keep_split: 'bool',
    dry_run: 'bool',
    imatrix: 'void *',
    kv_overrides: 'void *',
    tt_overrides: 'void *',
    prune_layers: 'void *',
    max_buf_size: 'size_t',
  });
  api = {
    backendInit: lib.func('void llama_backend_init(void)'),
    defaults: lib.func('llama_model_quantize_params llama_model_quantize_default_params(void)'),
    quantize: lib.func(
      'uint32_t llama_model_quantize(const char *inp, const char *out, const llama_model_quantize_params *params)',
    ),
  };
  api.backendInit();
  return api;
}

/**
 * Quantizes `input` to `output` with llama.cpp. `ftype`: name or number; `pure`: every matrix gets the one type.
 * Requantizing already-quantized tensors is allowed (needed for ALL_F32 copies of quantized models).
 */
export function quantizeModel(input, output, ftype, { pure = false, threads = 1 } = {}) {
  const { defaults, quantize } = loadLlama();
  const ft = typeof ftype === 'number' ? ftype : (LLAMA_FTYPES[String(ftype).toUpperCase()] ?? Number(ftype));
  if (!Number.isInteger(ft)) throw new Error(`oracle: unknown llama ftype ${ftype}`);
  const p = defaults();
  p.nthread = threads;
  p.ftype = ft;
  p.allow_requantize = true;
  p.pure = pure;
  const rc = quantize(resolve(input), resolve(output), p);
  if (rc !== 0 || !existsSync(output))
    throw new Error(`oracle: llama_model_quantize(${input} → ${ftype}) failed with ${rc}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const flags = new Set(args.filter((a) => a.startsWith('--')));
  const pos = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--threads');
  if (pos.length !== 3) {
    console.error('usage: node scripts/oracle/quantize-model.mjs <in.gguf> <out.gguf> <ftype> [--pure] [--threads N]');
    process.exit(2);
  }
  const ti = args.indexOf('--threads');
  quantizeModel(pos[0], pos[1], pos[2], { pure: flags.has('--pure'), threads: ti >= 0 ? Number(args[ti + 1]) : 1 });
}
