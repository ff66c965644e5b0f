#!/usr/bin/env bash
# The whole GPU-machine check in one command, for a machine with no package registry (this workplace's `device`):
# unpacks what scripts/device-pack.sh put in .devcarry/ (Node, Dawn, node-llama-cpp Vulkan, HEAD's tree with its
# bundles, the fixtures), then (1) reports the adapter, (2) runs `webgguf conform --backend webgpu --kernels hardware`
# on every packed fixture on the f16 and the f32 path, (3) per-kernel decode GEMV GB/s on 151936×896 and 14336×4096
# (test/bench/gemv-kernels.bench.ts), (4) runs scripts/device-bench.sh (our WebGPU vs llama.cpp Vulkan, synthetic
# Llama-3.2-1B Q4_0 and Q4_K). Results: $OUT/device-results.tgz (or .cache/device/), the tables also on stdout.
# Usage: bash scripts/device-run.sh [conform|kernels|bench|all]
set -uo pipefail
WHAT="${1:-all}"
REPO="$PWD"; CARRY="$REPO/.devcarry"; FINAL="${OUT:-$REPO/.cache/device}"; RES=/tmp/webgguf-results
rm -rf "$RES"; mkdir -p "$RES" "$FINAL"
W=/tmp/webgguf-device
log() { echo "[device $(date -u +%H:%M:%S)] $*" | tee -a "$RES/device.log"; }

if [ ! -d "$W/main/dist/scripts" ]; then
  rm -rf "$W"; mkdir -p "$W/bin" "$W/shared" "$W/main/node_modules"
  for f in "$REPO"/.gl/*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done; ldconfig
  tar -C "$W/main" -xJf "$CARRY/snapshot.tar.xz"
  tar -C "$W/main/node_modules" -xJf "$CARRY/webgpu.tar.xz"
  tar -C "$W/main/scripts/oracle" -xJf "$CARRY/oracle.tar.xz" &
  tar -C "$W/shared" -xJf "$CARRY/models.tar.xz" &
  xz -dc "$CARRY/node.xz" > "$W/bin/node" && chmod +x "$W/bin/node"
  wait
fi
export PATH="$W/bin:$PATH"
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_ICD_FILENAMES="$icd" VK_DRIVER_FILES="$icd"; break; fi
done
export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
cd "$W/main"
log "snapshot $(cat "$CARRY/snapshot.commit"); node $(node --version); ICD ${VK_ICD_FILENAMES:-none}; $(nproc) cores"
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader 2>&1 | tee -a "$RES/device.log"

# 1. The adapter Dawn sees.
timeout 60 node --input-type=module -e "
  const { create, globals } = await import('webgpu'); Object.assign(globalThis, globals);
  const gpu = create([]); const a = await gpu.requestAdapter({ powerPreference: 'high-performance' });
  if (!a) { console.log('NO ADAPTER'); process.exit(1); }
  const l = a.limits;
  console.log(JSON.stringify({ info: { vendor: a.info.vendor, architecture: a.info.architecture, description: a.info.description,
    subgroupMinSize: a.info.subgroupMinSize, subgroupMaxSize: a.info.subgroupMaxSize,
    subgroupMatrixConfigs: a.info.subgroupMatrixConfigs }, features: [...a.features].sort(),
    limits: { maxStorageBufferBindingSize: l.maxStorageBufferBindingSize, maxBufferSize: l.maxBufferSize,
      maxComputeWorkgroupStorageSize: l.maxComputeWorkgroupStorageSize, maxComputeInvocationsPerWorkgroup: l.maxComputeInvocationsPerWorkgroup,
      maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage } }));
  process.exit(0);" 2>&1 | grep -v '^Warning' | tee "$RES/adapter.json" | tee -a "$RES/device.log"

# 2. Conformance of every packed fixture on the real GPU, f16 and f32 paths (4 processes at a time).
if [ "$WHAT" = all ] || [ "$WHAT" = conform ]; then
  log "conformance"
  ls "$W"/shared/models/*.gguf "$W"/shared/models/*/*.gguf | while read -r m; do echo "$m"; echo "$m --f32"; done |
    xargs -P 4 -I{} sh -c 'set -- {}; r=$(timeout 120 node scripts/webgguf.mjs conform "$1" --backend webgpu --kernels hardware $2 2>&1 | grep -v "^Warning"); \
      echo "$(basename "$1") ${2:-f16}: $(echo "$r" | tail -1) | $(echo "$r" | grep -E "^backend:|FAIL" | tr "\n" " ")"' |
    sort | tee "$RES/conform.txt"
  log "conformance: $(grep -c ' 0 failed' "$RES/conform.txt") of $(wc -l < "$RES/conform.txt") runs passed"
fi

# 3. Per-kernel GEMV bandwidth on large shapes (the hardware kernel set).
if [ "$WHAT" = all ] || [ "$WHAT" = kernels ]; then
  log "gemv kernels"
  WEBGGUF_REAL_GPU=1 WEBGGUF_TS_BUNDLES="$W/main/dist/scripts" timeout 300 node scripts/run-ts.mjs test/bench/gemv-kernels.bench.ts 20 hardware 2>&1 |
    grep -v '^Warning' | tee "$RES/gemv-kernels.md"
  # … and the same set as a GPU without subgroups runs it (Firefox, Safari: gemv with workgroup-memory reductions)
  WEBGGUF_REAL_GPU=1 WEBGGUF_TS_BUNDLES="$W/main/dist/scripts" timeout 300 node scripts/run-ts.mjs test/bench/gemv-kernels.bench.ts 20 hardware-nosubgroups 2>&1 |
    grep -v '^Warning' | tee "$RES/gemv-kernels-nosubgroups.md"
  # the same with gemv_sg's Q8 activations off (f32 x), against the default (on where packed 4×8-bit dots exist)
  WEBGGUF_REAL_GPU=1 WEBGGUF_TS_BUNDLES="$W/main/dist/scripts" timeout 300 node scripts/run-ts.mjs test/bench/gemv-kernels.bench.ts 20 hardware off 2>&1 |
    grep -v '^Warning' | tee "$RES/gemv-kernels-int8-off.md"
fi

# 4. Benchmarks (our WebGPU vs llama.cpp Vulkan); the bundles stand in for the dev dependencies.
if [ "$WHAT" = all ] || [ "$WHAT" = bench ]; then
  export WEBGGUF_TS_BUNDLES="$W/main/dist/scripts" WEBGGUF_CACHE="$W/synthetic"
  OUT="$RES" bash scripts/device-bench.sh "${GPU_BW:-4800}"
fi
log "done"
cat "$RES"/*.md 2>/dev/null | grep -E '^\||^#|^Command' | cut -c1-400
tar -czf "$FINAL/device-results.tgz" -C "$RES" .
