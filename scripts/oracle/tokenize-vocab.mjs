// llama.cpp's own tokenizer as an oracle (node-llama-cpp's prebuilt libllama through koffi): loads vocab-only GGUFs and
// answers llama_tokenize / llama_token_to_piece / llama_detokenize exactly, with add_special and parse_special as asked.
// Usage: node scripts/oracle/tokenize-vocab.mjs <job.json> <out.json>
//   job.json: [{ "gguf": path, "cases": [{ "text", "addSpecial", "parseSpecial" }] }]
//   out.json: [{ "cases": [{ ...case, "ids" }], "pieces": [[hex, hexSpecial] per token id],
//               "detok": [{ "ids", "text": hex, "textSpecial": hex }] }]  (bytes as hex: pieces need not be UTF-8)
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import koffi from 'koffi';
import { nativeBinDir } from './ggml-lib.mjs';

const dir = nativeBinDir();
const lib = koffi.load(
  join(
    dir,
    readdirSync(dir).find((f) => f.startsWith('libllama.') && f.includes('.so')),
  ),
);
// include/llama.h of the bundled llama.cpp (v0.5.0 / the snapshot in gitRelease.bundle). Registered by name: the
// signatures below refer to it as `llama_model_params`.
koffi.struct('llama_model_params', {
  devices: 'void *',
  tensor_buft_overrides: 'void *',
  n_gpu_layers: 'int32_t',
  split_mode: 'int',
  load_mode: 'int',
  lazy_mode: 'int',
  main_gpu: 'int32_t',
  tensor_split: 'void *',
  progress_callback: 'void *',
  progress_callback_user_data: 'void *',
  kv_overrides: 'void *',
  vocab_only: 'bool',
  check_tensors: 'bool',
  use_extra_bufts: 'bool',
  no_host: 'bool',
  no_alloc: 'bool',
  load_mtp: 'bool',
});
const api = {
  backendInit: lib.func('void llama_backend_init(void)'),
  defaults: lib.func('llama_model_params llama_model_default_params(void)'),
  load: lib.func('void *llama_model_load_from_file(const char *path, llama_model_params params)'),
  free: lib.func('void llama_model_free(void *model)'),
  vocab: lib.func('const void *llama_model_get_vocab(const void *model)'),
  tokenize: lib.func(
    'int32_t llama_tokenize(const void *vocab, const char *text, int32_t len, _Out_ int32_t *tokens, int32_t max, bool add, bool parse)',
  ),
  piece: lib.func(
    'int32_t llama_token_to_piece(const void *vocab, int32_t token, _Out_ uint8_t *buf, int32_t len, int32_t lstrip, bool special)',
  ),
  detok: lib.func(
    'int32_t llama_detokenize(const void *vocab, const int32_t *tokens, int32_t n, _Out_ uint8_t *text, int32_t max, bool remove, bool unparse)',
  ),
  nTokens: lib.func('int32_t llama_vocab_n_tokens(const void *vocab)'),
};

const hex = (u8) => Buffer.from(u8).toString('hex');

function tokenize(vocab, text, add, parse) {
  const bytes = Buffer.from(text, 'utf8');
  let out = new Int32Array(bytes.length * 2 + 8);
  let n = api.tokenize(vocab, bytes, bytes.length, out, out.length, add, parse);
  if (n < 0) {
    out = new Int32Array(-n);
    n = api.tokenize(vocab, bytes, bytes.length, out, out.length, add, parse);
  }
  return [...out.subarray(0, n)];
}

function piece(vocab, id, special) {
  let buf = new Uint8Array(256);
  let n = api.piece(vocab, id, buf, buf.length, 0, special);
  if (n < 0) {
    buf = new Uint8Array(-n);
    n = api.piece(vocab, id, buf, buf.length, 0, special);
  }
  return buf.subarray(0, n);
}

function detok(vocab, ids, unparse) {
  let buf = new Uint8Array(ids.length * 64 + 16);
  let n = api.detok(vocab, Int32Array.from(ids), ids.length, buf, buf.length, false, unparse);
  if (n < 0) {
    buf = new Uint8Array(-n);
    n = api.detok(vocab, Int32Array.from(ids), ids.length, buf, buf.length, false, unparse);
  }
  return buf.subarray(0, n);
}

const [jobPath, outPath] = process.argv.slice(2);
if (!jobPath || !outPath) {
  console.error('usage: node tokenize-vocab.mjs <job.json> <out.json>');
  process.exit(2);
}
api.backendInit();
const results = [];
for (const job of JSON.parse(readFileSync(jobPath, 'utf8'))) {
  const params = api.defaults();
  params.vocab_only = true;
  params.n_gpu_layers = 0;
  const model = api.load(job.gguf, params);
  if (!model) throw new Error(`llama.cpp could not load ${job.gguf}`);
  const vocab = api.vocab(model);
  const cases = job.cases.map((c) => ({ ...c, ids: tokenize(vocab, c.text, c.addSpecial, c.parseSpecial) }));
  const pieces = [];
  for (let id = 0; id < api.nTokens(vocab); id++)
    pieces.push([hex(piece(vocab, id, false)), hex(piece(vocab, id, true))]);
  const detoks = cases
    .filter((c) => c.addSpecial && c.parseSpecial)
    .map((c) => ({ ids: c.ids, text: hex(detok(vocab, c.ids, false)), textSpecial: hex(detok(vocab, c.ids, true)) }));
  results.push({ cases, pieces, detok: detoks });
  api.free(model);
}
writeFileSync(outPath, JSON.stringify(results));
