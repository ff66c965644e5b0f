// llama.cpp's mtmd as the oracle for a prompt holding an image (issue #17): loads a text model and its mmproj,
// tokenizes a prompt whose image sits at mtmd's default marker (`mtmd_tokenize`: BOS, text chunks, the projector's
// begin/end text around the image chunk), evaluates text one token per llama_decode (logits of every text position)
// and the image chunk with `mtmd_helper_decode_image_chunk` (non-causal for gemma3, as mtmd decides), and prints
// JSON: the chunks (token ids / image size), the image embeddings and the logits of every text position (F32 KV),
// f32 base64.
// Dev-only: built by scripts/make-image-logits.ts against the CPU build of libmtmd/libllama (LLCPP_BIN).
// Usage: mtmd-logits <model.gguf> <mmproj.gguf> <rgb file> <width> <height> <prompt>  (JSON on stdout)

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"
#include "mtmd.h"
#include "mtmd-helper.h"

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static void put_b64(const void * data, size_t n) {
    const unsigned char * p = data;
    putchar('"');
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = p[i] << 16 | (i + 1 < n ? p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
        putchar(B64[v >> 18 & 63]);
        putchar(B64[v >> 12 & 63]);
        putchar(i + 1 < n ? B64[v >> 6 & 63] : '=');
        putchar(i + 2 < n ? B64[v & 63] : '=');
    }
    putchar('"');
}

int main(int argc, char ** argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s model mmproj rgb width height prompt\n", argv[0]);
        return 2;
    }
    const int w = atoi(argv[4]), h = atoi(argv[5]);
    unsigned char * rgb = malloc((size_t) w * h * 3);
    FILE * f = fopen(argv[3], "rb");
    if (!f || fread(rgb, 3, (size_t) w * h, f) != (size_t) w * h) return fprintf(stderr, "cannot read %s\n", argv[3]), 1;
    fclose(f);

    llama_backend_init();
    struct llama_model * model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) return fprintf(stderr, "cannot load %s\n", argv[1]), 1;
    struct llama_context_params cp = llama_context_default_params();
    cp.n_ctx = 512;
    cp.n_batch = 512;
    cp.n_ubatch = 512;
    cp.n_threads = 1;
    cp.n_threads_batch = 1;
    cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED; // f32 attention
    cp.type_k = GGML_TYPE_F32; // F32 KV: the suite's logits_per_position_kv_f32
    cp.type_v = GGML_TYPE_F32;
    struct llama_context * lctx = llama_init_from_model(model, cp);
    if (!lctx) return fprintf(stderr, "cannot create a context\n"), 1;

    struct mtmd_context_params mp = mtmd_context_params_default();
    mp.use_gpu = false;
    mp.n_threads = 1;
    mp.print_timings = false;
    mp.warmup = false;
    mp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    mtmd_context * ctx = mtmd_init_from_file(argv[2], model, mp);
    if (!ctx) return fprintf(stderr, "cannot load %s\n", argv[2]), 1;

    mtmd_bitmap * bitmap = mtmd_bitmap_init(w, h, rgb);
    mtmd_input_chunks * chunks = mtmd_input_chunks_init();
    mtmd_input_text text = { argv[6], strlen(argv[6]), true, true };
    const mtmd_bitmap * bitmaps[1] = { bitmap };
    if (mtmd_tokenize(ctx, chunks, &text, bitmaps, 1) != 0) return fprintf(stderr, "mtmd_tokenize failed\n"), 1;

    const int n_vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    const int n_embd = llama_model_n_embd_inp(model);
    llama_pos n_past = 0; // the rope position (mtmd's n_past: an M-RoPE image advances it by max(nx, ny))
    int kv = 0;           // the KV index: what "start" reports (every chunk's tokens one after the other)
    llama_batch one = llama_batch_init(1, 0, 1);
    printf("{\"n_vocab\":%d,\"n_embd\":%d,\"chunks\":[", n_vocab, n_embd);
    for (size_t i = 0; i < mtmd_input_chunks_size(chunks); i++) {
        const mtmd_input_chunk * chunk = mtmd_input_chunks_get(chunks, i);
        if (i > 0) putchar(',');
        if (mtmd_input_chunk_get_type(chunk) == MTMD_INPUT_CHUNK_TYPE_TEXT) {
            size_t n = 0;
            const llama_token * ids = mtmd_input_chunk_get_tokens_text(chunk, &n);
            printf("{\"type\":\"text\",\"start\":%d,\"tokens\":[", kv);
            for (size_t k = 0; k < n; k++) printf("%s%d", k ? "," : "", ids[k]);
            printf("],\"logits\":[");
            for (size_t k = 0; k < n; k++) {
                // explicit positions, as mtmd_helper_eval_chunks: after an M-RoPE image n_past is ahead of the KV
                one.n_tokens = 1;
                one.token[0] = ids[k];
                one.pos[0] = n_past;
                one.n_seq_id[0] = 1;
                one.seq_id[0][0] = 0;
                one.logits[0] = 1;
                if (llama_decode(lctx, one) != 0) return fprintf(stderr, "decode failed\n"), 1;
                if (k) putchar(',');
                put_b64(llama_get_logits_ith(lctx, -1), sizeof(float) * n_vocab);
                n_past++;
                kv++;
            }
            printf("]}");
        } else {
            const size_t n = mtmd_input_chunk_get_n_tokens(chunk);
            if (mtmd_encode_chunk(ctx, chunk) != 0) return fprintf(stderr, "encode failed\n"), 1;
            float * embd = mtmd_get_output_embd(ctx);
            printf("{\"type\":\"image\",\"start\":%d,\"n_tokens\":%zu,\"non_causal\":%s,\"embeddings\":", kv, n,
                   mtmd_decode_use_non_causal(ctx, chunk) ? "true" : "false");
            // (start: the KV index; the image's rope positions start at n_past)
            put_b64(embd, sizeof(float) * n * n_embd);
            printf("}");
            llama_pos next = 0;
            if (mtmd_helper_decode_image_chunk(ctx, lctx, chunk, embd, n_past, 0, 512, &next, NULL, NULL) != 0)
                return fprintf(stderr, "image decode failed\n"), 1;
            n_past = next;
            kv += (int) n;
        }
    }
    printf("]}\n");
    llama_batch_free(one);
    mtmd_input_chunks_free(chunks);
    mtmd_bitmap_free(bitmap);
    mtmd_free(ctx);
    llama_free(lctx);
    llama_model_free(model);
    return 0;
}
