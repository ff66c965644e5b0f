#!/usr/bin/env bash
# Prepared benchmark for a machine with a real GPU (the `device` machine, when a task is lent one): our WebGPU in Node
# (Dawn on the GPU's Vulkan driver) vs llama.cpp's Vulkan build (and CUDA if Vulkan has no device) on synthetic
# Llama-3.2-1B-shaped Q4_0 and Q4_K models, prefill 128/512 and decode 128, as a fraction of the GPU's bandwidth.
# Installs only from the npm registry when node_modules are missing (an offline machine gets them from
# scripts/device-pack.sh + scripts/device-run.sh instead). Budget: ≈ 1 min model generation, ≈ 3 min benchmarks.
# Usage (repo root):  bash scripts/device-bench.sh [GPU_BANDWIDTH_GBPS]      results: $OUT (or .cache/bench/device)
# Env: SHAPE (default llama-3.2-1b), QUANTS (default "q4_0 q4_k"), PEERS (default: the llama.cpp GPU build that works),
#      ROUNDS (default 2), PROMPTS (default 128,512), DECODE (default 128).
set -uo pipefail

GPU_BW="${1:-${GPU_BW:-4800}}"         # H200: 4.8 TB/s HBM3e; pass the right figure for another GPU
OUT_DIR="${OUT:-$PWD/.cache/bench/device}"
mkdir -p "$OUT_DIR"
export WEBGGUF_CACHE="${WEBGGUF_CACHE:-$PWD/.cache/synthetic}"  # keep the generated models beside the checkout
export WEBGGUF_REAL_GPU=1                                     # test/bench/node-gpu.ts: do not force lavapipe
export GGML_VK_VISIBLE_DEVICES="${GGML_VK_VISIBLE_DEVICES:-0}"
log() { echo "[device-bench $(date -u +%H:%M:%S)] $*" | tee -a "$OUT_DIR/device-bench.log"; }

log "machine: $(nproc) cores, $(free -g | awk '/Mem:/{print $2}') GiB; node $(node --version)"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$OUT_DIR/device-bench.log"
command -v vulkaninfo >/dev/null && vulkaninfo --summary 2>/dev/null | grep -E 'deviceName|driverName' | tee -a "$OUT_DIR/device-bench.log"
ls /usr/share/vulkan/icd.d /etc/vulkan/icd.d 2>/dev/null | tee -a "$OUT_DIR/device-bench.log"

# 1. Dependencies from npm only (root: Dawn for Node, vite, tsx…; scripts/oracle: node-llama-cpp prebuilt binaries).
if [ ! -d node_modules/webgpu ]; then
  log "npm ci (root)"; timeout 300 npm ci --no-audit --no-fund >>"$OUT_DIR/device-bench.log" 2>&1 || log "npm ci failed"
fi
if [ ! -d scripts/oracle/node_modules/node-llama-cpp ]; then
  log "npm install (scripts/oracle)"
  (cd scripts/oracle && timeout 300 npm install --no-audit --no-fund) >>"$OUT_DIR/device-bench.log" 2>&1 || log "oracle install failed"
fi

SHAPE="${SHAPE:-llama-3.2-1b}"; QUANTS="${QUANTS:-q4_0 q4_k}"; ROUNDS="${ROUNDS:-2}"

# 2. Which llama.cpp GPU build works here (Vulkan preferred: same API family as WebGPU/Dawn; else CUDA).
if [ -z "${PEERS:-}" ]; then
PEERS=vulkan
probe() {
  timeout 120 node --input-type=module -e "
    const m = await import('./scripts/oracle/node_modules/node-llama-cpp/dist/index.js');
    const l = await m.getLlama({ gpu: '$1', build: 'never', logLevel: m.LlamaLogLevel.error });
    console.log('$1', l.gpu, (await l.getGpuDeviceNames()).join(', '));
    process.exit(l.gpu === '$1' ? 0 : 1);" 2>&1 | tail -1
}
if ! probe vulkan | tee -a "$OUT_DIR/device-bench.log" | grep -q '^vulkan vulkan'; then
  log "llama.cpp Vulkan unavailable; trying CUDA"; PEERS=cuda
  probe cuda | tee -a "$OUT_DIR/device-bench.log" | grep -q '^cuda cuda' || { log "no llama.cpp GPU build works; CPU peer only"; PEERS=llama.cpp; }
fi
fi

# 3. Models (cached in $WEBGGUF_CACHE; generated in parallel), then the runs. Every step has a hard limit.
log "generating synthetic $SHAPE $QUANTS"
for QUANT in $QUANTS; do
  timeout 300 node scripts/run-ts.mjs scripts/synthetic/make-benchmark-models.ts "$SHAPE" "$QUANT" 2>&1 | tee -a "$OUT_DIR/device-bench.log" &
done
wait
for QUANT in $QUANTS; do
  log "bench $SHAPE $QUANT vs $PEERS"
  timeout 420 node --experimental-wasm-relaxed-simd scripts/run-ts.mjs test/bench/bench.ts \
    --shape "$SHAPE" --quant "$QUANT" --backends webgpu --peers "$PEERS" --threads "$(nproc | awk '{print ($1>8)?8:$1}')" \
    --rounds "$ROUNDS" --prompts "${PROMPTS:-128,512}" --decode "${DECODE:-128}" --no-bandwidth --gpu-bw "$GPU_BW" --timeout 150 --out "$OUT_DIR" \
    2>&1 | tee -a "$OUT_DIR/device-bench.log" | grep -E '^round|^wrote|^\|' || log "bench $QUANT failed (see log)"
done
log "done; results in $OUT_DIR"
