// llama.cpp's mtmd image encode time (issue #17's encode bench, test/bench/vision-bench.ts): loads a text model and its
// mmproj on the CPU, tokenizes a prompt holding one image, then encodes the image chunk `rounds` times
// (`mtmd_encode_chunk`: preprocessing is done once by mtmd_tokenize, as webgguf's bench preprocesses once), printing
// JSON with each round's wall and process CPU milliseconds (n_threads threads; with 1 thread ggml computes on this
// thread, so CPU time is load-robust on a shared machine). Flash attention as llama.cpp chooses (auto), no warmup.
// Dev-only: built by the bench against the CPU build of libmtmd/libllama (LLCPP_BIN).
// Usage: mtmd-encode-time <model.gguf> <mmproj.gguf> <rgb file> <width> <height> <threads> <rounds>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llama.h"
#include "mtmd.h"

static double ms(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

int main(int argc, char ** argv) {
    if (argc != 8) {
        fprintf(stderr, "usage: %s model mmproj rgb width height threads rounds\n", argv[0]);
        return 2;
    }
    const int w = atoi(argv[4]), h = atoi(argv[5]), threads = atoi(argv[6]), rounds = atoi(argv[7]);
    unsigned char * rgb = malloc((size_t) w * h * 3);
    FILE * f = fopen(argv[3], "rb");
    if (!f || fread(rgb, 3, (size_t) w * h, f) != (size_t) w * h) return fprintf(stderr, "cannot read %s\n", argv[3]), 1;
    fclose(f);

    llama_backend_init();
    struct llama_model * model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) return fprintf(stderr, "cannot load %s\n", argv[1]), 1;
    struct mtmd_context_params mp = mtmd_context_params_default();
    mp.use_gpu = false;
    mp.n_threads = threads;
    mp.print_timings = false;
    mp.warmup = false;
    mtmd_context * ctx = mtmd_init_from_file(argv[2], model, mp);
    if (!ctx) return fprintf(stderr, "cannot load %s\n", argv[2]), 1;

    mtmd_bitmap * bitmap = mtmd_bitmap_init(w, h, rgb);
    mtmd_input_chunks * chunks = mtmd_input_chunks_init();
    const char * prompt = "<__media__>";
    mtmd_input_text text = { prompt, strlen(prompt), true, true };
    const mtmd_bitmap * bitmaps[1] = { bitmap };
    if (mtmd_tokenize(ctx, chunks, &text, bitmaps, 1) != 0) return fprintf(stderr, "mtmd_tokenize failed\n"), 1;
    const mtmd_input_chunk * image = NULL;
    for (size_t i = 0; i < mtmd_input_chunks_size(chunks); i++) {
        const mtmd_input_chunk * c = mtmd_input_chunks_get(chunks, i);
        if (mtmd_input_chunk_get_type(c) == MTMD_INPUT_CHUNK_TYPE_IMAGE) image = c;
    }
    if (!image) return fprintf(stderr, "no image chunk\n"), 1;
    printf("{\"n_tokens\":%zu,\"rounds\":[", mtmd_input_chunk_get_n_tokens(image));
    for (int r = 0; r < rounds; r++) {
        const double w0 = ms(CLOCK_MONOTONIC), c0 = ms(CLOCK_PROCESS_CPUTIME_ID);
        if (mtmd_encode_chunk(ctx, image) != 0) return fprintf(stderr, "encode failed\n"), 1;
        const double w1 = ms(CLOCK_MONOTONIC), c1 = ms(CLOCK_PROCESS_CPUTIME_ID);
        printf("%s{\"wall_ms\":%.1f,\"cpu_ms\":%.1f}", r ? "," : "", w1 - w0, c1 - c0);
        fflush(stdout);
    }
    printf("]}\n");
    mtmd_input_chunks_free(chunks);
    mtmd_bitmap_free(bitmap);
    mtmd_free(ctx);
    llama_model_free(model);
    return 0;
}
