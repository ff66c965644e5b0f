// llama.cpp's mtmd as the oracle for image input: for an mmproj GGUF, a text model and RGB8 images, records per image
// the preprocessed encoder input (`inp_raw`, f32 [3, size, size], caught through the eval callback) and the image
// embeddings (`mtmd_encode_chunk` + `mtmd_get_output_embd`). Needs the CPU build of libmtmd/libllama from the same
// llama.cpp snapshot as node-llama-cpp (../shared/docs/test-environment.md); LLCPP_BIN names its bin folder
// (default /work/cache/llcpp/build/bin).
// Usage: node scripts/oracle/make-image-reference.mjs <job.json> <out.json>
//   job.json: { mmproj, textModel, images: [{ width, height, rgbFile }] }  (rgbFile: raw RGBRGB… bytes)
//   out.json: [{ nTokens, nEmbd, inpRaw: { ne: [..], data: base64 f32 }, embeddings: base64 f32, chunks }]
//   (the first image chunk's; `chunks` holds every image chunk of the image, same fields, for tiled projectors)
//   (an image mtmd_tokenize refuses: { refused: <its return code>, chunks: [] })

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import koffi from 'koffi';

const bin = process.env.LLCPP_BIN ?? '/work/cache/llcpp/build/bin';
const base = koffi.load(join(bin, 'libggml-base.so'));
const llama = koffi.load(join(bin, 'libllama.so'));
const mtmd = koffi.load(join(bin, 'libmtmd.so'));

const EvalCb = koffi.proto('bool mtmd_eval_cb(void *t, bool ask, void *ud)');
koffi.struct('mtmd_context_params', {
  use_gpu: 'bool',
  device: 'void *',
  print_timings: 'bool',
  n_threads: 'int',
  image_marker: 'const char *',
  media_marker: 'const char *',
  flash_attn_type: 'int',
  warmup: 'bool',
  image_min_tokens: 'int',
  image_max_tokens: 'int',
  cb_eval: 'void *',
  cb_eval_user_data: 'void *',
  batch_max_tokens: 'int32_t',
  progress_callback: 'void *',
  progress_callback_user_data: 'void *',
});
koffi.struct('mtmd_input_text', {
  text: 'const char *',
  text_len: 'size_t',
  add_special: 'bool',
  parse_special: 'bool',
});
// include/llama.h of the snapshot; same struct as tokenize-vocab.mjs.
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

const ggml_nbytes = base.func('size_t ggml_nbytes(void *t)');
const ggml_backend_tensor_get = base.func('void ggml_backend_tensor_get(void *t, void *data, size_t off, size_t size)');
const llama_backend_init = llama.func('void llama_backend_init()');
const llama_model_default_params = llama.func('llama_model_params llama_model_default_params(void)');
const llama_model_load_from_file = llama.func(
  'void *llama_model_load_from_file(const char *path, llama_model_params p)',
);
const mtmd_context_params_default = mtmd.func('mtmd_context_params mtmd_context_params_default()');
const mtmd_init_from_file = mtmd.func('void *mtmd_init_from_file(const char *f, void *model, mtmd_context_params p)');
const mtmd_bitmap_init = mtmd.func('void *mtmd_bitmap_init(uint32_t nx, uint32_t ny, const uint8_t *data)');
const mtmd_input_chunks_init = mtmd.func('void *mtmd_input_chunks_init()');
const mtmd_input_chunks_size = mtmd.func('size_t mtmd_input_chunks_size(void *c)');
const mtmd_input_chunks_get = mtmd.func('void *mtmd_input_chunks_get(void *c, size_t i)');
const mtmd_input_chunk_get_type = mtmd.func('int mtmd_input_chunk_get_type(void *c)');
const mtmd_input_chunk_get_n_tokens = mtmd.func('size_t mtmd_input_chunk_get_n_tokens(void *c)');
const mtmd_tokenize = mtmd.func(
  'int32_t mtmd_tokenize(void *ctx, void *out, const mtmd_input_text *text, void **bitmaps, size_t n)',
);
const mtmd_encode_chunk = mtmd.func('int32_t mtmd_encode_chunk(void *ctx, void *chunk)');
const mtmd_get_output_embd = mtmd.func('float *mtmd_get_output_embd(void *ctx)');
const mtmd_default_marker = mtmd.func('const char *mtmd_default_marker()');
const mtmd_input_chunks_free = mtmd.func('void mtmd_input_chunks_free(void *c)');
const mtmd_bitmap_free = mtmd.func('void mtmd_bitmap_free(void *b)');

// ggml_tensor layout (ggml.h): type, buffer, ne[4] @16, nb[4] @48, op @80, op_params[16] @84, flags @148,
// src[10] @152, view_src @232, view_offs @240, data @248, name[64] @256.
const SRC0 = 152;
const NE = 16;
const NAME = 256;
const tensorName = (t) => koffi.decode(t, NAME, 'char', -1);
/** The source of node `t` named `name` (ggml_conv_2d's im2col takes the image as src[1]), or null. */
function sourceNamed(t, name) {
  for (let i = 0; i < 10; i++) {
    const s = koffi.decode(t, SRC0 + 8 * i, 'void *');
    if (s !== null && tensorName(s) === name) return s;
  }
  return null;
}

const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));
llama_backend_init();
const mp = llama_model_default_params();
const model = llama_model_load_from_file(job.textModel, mp);
if (!model) throw new Error(`oracle: cannot load ${job.textModel}`);

let captured = null;
const cb = koffi.register((t, ask) => {
  const src0 = sourceNamed(t, 'inp_raw');
  if (ask) return src0 !== null;
  if (src0 !== null && captured === null) {
    const n = Number(ggml_nbytes(src0));
    const buf = Buffer.alloc(n);
    ggml_backend_tensor_get(src0, buf, 0, n);
    const ne = Array.from(koffi.decode(src0, NE, koffi.array('int64_t', 4)), Number);
    captured = { ne, data: buf.toString('base64') };
  }
  return true;
}, koffi.pointer(EvalCb));

const params = mtmd_context_params_default();
params.use_gpu = false;
params.n_threads = 1;
params.print_timings = false;
params.warmup = false;
params.flash_attn_type = 0; // LLAMA_FLASH_ATTN_TYPE_DISABLED: f32 attention
params.cb_eval = cb;
const ctx = mtmd_init_from_file(job.mmproj, model, params);
if (!ctx) throw new Error(`oracle: mtmd_init_from_file failed for ${job.mmproj}`);

const out = [];
for (const img of job.images) {
  const rgb = readFileSync(img.rgbFile);
  const bitmap = mtmd_bitmap_init(img.width, img.height, rgb);
  const chunks = mtmd_input_chunks_init();
  const marker = mtmd_default_marker();
  const text = { text: marker, text_len: Buffer.byteLength(marker), add_special: false, parse_special: true };
  const rc = mtmd_tokenize(ctx, chunks, text, [bitmap], 1);
  if (rc !== 0) {
    // mtmd refuses the image (e.g. a resize target out of range): recorded, so the runtime must refuse it too.
    out.push({ refused: rc, chunks: [] });
    mtmd_input_chunks_free(chunks);
    mtmd_bitmap_free(bitmap);
    continue;
  }
  let done = false;
  for (let i = 0; i < Number(mtmd_input_chunks_size(chunks)); i++) {
    const chunk = mtmd_input_chunks_get(chunks, i);
    if (mtmd_input_chunk_get_type(chunk) !== 1) continue; // MTMD_INPUT_CHUNK_TYPE_IMAGE
    captured = null;
    if (mtmd_encode_chunk(ctx, chunk) !== 0) throw new Error('oracle: mtmd_encode_chunk failed');
    const nTokens = Number(mtmd_input_chunk_get_n_tokens(chunk));
    const nEmbd = job.nEmbdText;
    const embd = koffi.decode(mtmd_get_output_embd(ctx), koffi.array('float', nTokens * nEmbd));
    const rec = {
      nTokens,
      nEmbd,
      inpRaw: captured,
      embeddings: Buffer.from(new Float32Array(embd).buffer).toString('base64'),
    };
    if (!done) out.push({ ...rec, chunks: [] });
    out[out.length - 1].chunks.push(rec); // tiled projectors: every image chunk, in prompt order
    done = true;
  }
  if (!done) throw new Error('oracle: no image chunk');
  mtmd_input_chunks_free(chunks);
  mtmd_bitmap_free(bitmap);
}
writeFileSync(process.argv[3], JSON.stringify(out));
